-- Version 6 of the PostgreSQL schema: model-call ceilings, reservations and their meters
-- (docs/design/rules.md#m1–#m13). Amounts are quota_amount (0 … 2^53 − 1, see 0001_quotaplane.sql).
-- A tenant's configured model-call ceilings, as JSON (core/call-ceilings.ts).
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_call_ceilings (
  tenant         TEXT COLLATE "C"    NOT NULL PRIMARY KEY,
  ceilings_json  JSONB    NOT NULL,
  updated_at_ms  BIGINT NOT NULL
);

-- One meter per subject of a tenant ('tenant', 'agent:<name>', 'model:<id>', 'group:<name>',
-- 'user:<id>'): booked_* the running total ever booked, held_* the worst cases of calls in flight,
-- latest_at_ms the newest usage row's instant (NULL: none), base_* the running total as of
-- pruned_through_ms, the instant through which usage rows were deleted.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_call_meters (
  tenant               TEXT COLLATE "C"    NOT NULL,
  subject              TEXT COLLATE "C"    NOT NULL,
  booked_tokens        :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  booked_requests      :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  booked_minor_units   :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  held_tokens          :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  held_requests        :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  held_minor_units     :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  latest_at_ms         BIGINT,
  base_tokens          :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  base_requests        :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  base_minor_units     :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  pruned_through_ms    BIGINT NOT NULL,
  PRIMARY KEY (tenant, subject)
);

-- A subject's running totals as of each instant something was booked to it. Instants never go back
-- within a subject, so a window's count is the meter's total less one row's.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_call_usage (
  tenant       TEXT COLLATE "C"    NOT NULL,
  subject      TEXT COLLATE "C"    NOT NULL,
  at_ms        BIGINT NOT NULL,
  tokens       :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  requests     :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  minor_units  :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  PRIMARY KEY (tenant, subject, at_ms)
);

-- One model call: its subjects (JSON array), its worst case held while open, its deadline, and
-- once ended its status ('booked' or 'released'), what was booked and whether as an estimate.
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_call_reservations (
  tenant                TEXT COLLATE "C"    NOT NULL,
  call_id               TEXT COLLATE "C"    NOT NULL,
  model                 TEXT COLLATE "C"    NOT NULL,
  agent                 TEXT COLLATE "C",
  end_user              TEXT COLLATE "C",
  subjects_json         JSONB    NOT NULL,
  reserved_tokens       :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  reserved_requests     :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  reserved_minor_units  :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  max_output_tokens     :QUOTAPLANE_SCHEMA.quota_amount NOT NULL,
  at_ms                 BIGINT NOT NULL,
  deadline_ms           BIGINT NOT NULL,
  status                TEXT COLLATE "C"    NOT NULL CHECK (status IN ('open', 'booked', 'released')),
  booked_tokens         :QUOTAPLANE_SCHEMA.quota_amount,
  booked_requests       :QUOTAPLANE_SCHEMA.quota_amount,
  booked_minor_units    :QUOTAPLANE_SCHEMA.quota_amount,
  estimated             BOOLEAN NOT NULL,
  closed_at_ms          BIGINT,
  PRIMARY KEY (tenant, call_id)
);
CREATE INDEX quota_call_reservations_open ON :QUOTAPLANE_SCHEMA.quota_call_reservations (tenant, deadline_ms) WHERE status = 'open';
CREATE INDEX quota_call_reservations_closed ON :QUOTAPLANE_SCHEMA.quota_call_reservations (tenant, closed_at_ms) WHERE status <> 'open';
