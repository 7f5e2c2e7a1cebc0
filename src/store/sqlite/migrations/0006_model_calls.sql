-- Version 6 of the SQLite schema: model-call ceilings, reservations and their meters
-- (docs/design/rules.md#m1–#m13). Amounts are checked non-negative, as in 0001_quota_schema.sql.
-- A tenant's configured model-call ceilings, as JSON (core/call-ceilings.ts).
CREATE TABLE quota_call_ceilings (
  tenant         TEXT    NOT NULL PRIMARY KEY,
  ceilings_json  TEXT    NOT NULL,
  updated_at_ms  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- One meter per subject of a tenant ('tenant', 'agent:<name>', 'model:<id>', 'group:<name>',
-- 'user:<id>'): booked_* the running total ever booked, held_* the worst cases of calls in flight,
-- latest_at_ms the newest usage row's instant (NULL: none), base_* the running total as of
-- pruned_through_ms, the instant through which usage rows were deleted.
CREATE TABLE quota_call_meters (
  tenant               TEXT    NOT NULL,
  subject              TEXT    NOT NULL,
  booked_tokens        INTEGER NOT NULL CHECK (booked_tokens >= 0),
  booked_requests      INTEGER NOT NULL CHECK (booked_requests >= 0),
  booked_minor_units   INTEGER NOT NULL CHECK (booked_minor_units >= 0),
  held_tokens          INTEGER NOT NULL CHECK (held_tokens >= 0),
  held_requests        INTEGER NOT NULL CHECK (held_requests >= 0),
  held_minor_units     INTEGER NOT NULL CHECK (held_minor_units >= 0),
  latest_at_ms         INTEGER,
  base_tokens          INTEGER NOT NULL CHECK (base_tokens >= 0),
  base_requests        INTEGER NOT NULL CHECK (base_requests >= 0),
  base_minor_units     INTEGER NOT NULL CHECK (base_minor_units >= 0),
  pruned_through_ms    INTEGER NOT NULL,
  PRIMARY KEY (tenant, subject)
) STRICT, WITHOUT ROWID;

-- A subject's running totals as of each instant something was booked to it. Instants never go back
-- within a subject, so a window's count is the meter's total less one row's.
CREATE TABLE quota_call_usage (
  tenant       TEXT    NOT NULL,
  subject      TEXT    NOT NULL,
  at_ms        INTEGER NOT NULL,
  tokens       INTEGER NOT NULL CHECK (tokens >= 0),
  requests     INTEGER NOT NULL CHECK (requests >= 0),
  minor_units  INTEGER NOT NULL CHECK (minor_units >= 0),
  PRIMARY KEY (tenant, subject, at_ms)
) STRICT, WITHOUT ROWID;

-- One model call: its subjects (JSON array), its worst case held while open, its deadline, and
-- once ended its status ('booked' or 'released'), what was booked and whether as an estimate.
CREATE TABLE quota_call_reservations (
  tenant                TEXT    NOT NULL,
  call_id               TEXT    NOT NULL,
  model                 TEXT    NOT NULL,
  agent                 TEXT,
  end_user              TEXT,
  subjects_json         TEXT    NOT NULL,
  reserved_tokens       INTEGER NOT NULL CHECK (reserved_tokens >= 0),
  reserved_requests     INTEGER NOT NULL CHECK (reserved_requests >= 0),
  reserved_minor_units  INTEGER NOT NULL CHECK (reserved_minor_units >= 0),
  max_output_tokens     INTEGER NOT NULL CHECK (max_output_tokens >= 0),
  at_ms                 INTEGER NOT NULL,
  deadline_ms           INTEGER NOT NULL,
  status                TEXT    NOT NULL CHECK (status IN ('open', 'booked', 'released')),
  booked_tokens         INTEGER CHECK (booked_tokens >= 0),
  booked_requests       INTEGER CHECK (booked_requests >= 0),
  booked_minor_units    INTEGER CHECK (booked_minor_units >= 0),
  estimated             INTEGER NOT NULL,
  closed_at_ms          INTEGER,
  PRIMARY KEY (tenant, call_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX quota_call_reservations_open ON quota_call_reservations (tenant, deadline_ms) WHERE status = 'open';
CREATE INDEX quota_call_reservations_closed ON quota_call_reservations (tenant, closed_at_ms) WHERE status <> 'open';
