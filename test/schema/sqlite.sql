-- The schema of a new quotaplane SQLite store. Generated from a live database by test/schema/schema-snapshot.ts: refresh it with `npm run snapshot:schema`, never by hand.
-- Applied migrations: 1 quota_schema, 2 halts_reach_running, 3 api_key_expiry_and_use, 4 events, 5 webhooks, 6 model_calls

-- table quota_agent_spent
CREATE TABLE quota_agent_spent (
  tenant       TEXT    NOT NULL,
  agent_name   TEXT    NOT NULL,
  period       TEXT    NOT NULL,
  tokens       INTEGER NOT NULL CHECK (tokens >= 0),
  minor_units  INTEGER NOT NULL CHECK (minor_units >= 0),
  PRIMARY KEY (tenant, agent_name, period)
) STRICT, WITHOUT ROWID;

-- table quota_audit
CREATE TABLE quota_audit (
  tenant       TEXT    NOT NULL,
  seq          INTEGER NOT NULL CHECK (seq >= 1),
  at_ms        INTEGER NOT NULL,
  actor        TEXT    NOT NULL,
  basis        TEXT    NOT NULL,
  action       TEXT    NOT NULL,
  subject      TEXT    NOT NULL,
  detail_json  TEXT    NOT NULL,
  prev_hash    TEXT    NOT NULL,
  hash         TEXT    NOT NULL,
  PRIMARY KEY (tenant, seq)
) STRICT, WITHOUT ROWID;

-- table quota_call_ceilings
CREATE TABLE quota_call_ceilings (
  tenant         TEXT    NOT NULL PRIMARY KEY,
  ceilings_json  TEXT    NOT NULL,
  updated_at_ms  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- table quota_call_meters
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

-- table quota_call_reservations
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

-- table quota_call_usage
CREATE TABLE quota_call_usage (
  tenant       TEXT    NOT NULL,
  subject      TEXT    NOT NULL,
  at_ms        INTEGER NOT NULL,
  tokens       INTEGER NOT NULL CHECK (tokens >= 0),
  requests     INTEGER NOT NULL CHECK (requests >= 0),
  minor_units  INTEGER NOT NULL CHECK (minor_units >= 0),
  PRIMARY KEY (tenant, subject, at_ms)
) STRICT, WITHOUT ROWID;

-- table quota_events
CREATE TABLE quota_events (
  seq        INTEGER PRIMARY KEY,
  id         TEXT    NOT NULL,
  event_key  TEXT    NOT NULL,
  tenant     TEXT    NOT NULL,
  type       TEXT    NOT NULL,
  at_ms      INTEGER NOT NULL,
  data_json  TEXT    NOT NULL,
  retired_by INTEGER NOT NULL DEFAULT 0
) STRICT;

-- table quota_halted
CREATE TABLE quota_halted (
  tenant    TEXT    NOT NULL,
  scope     TEXT    NOT NULL,
  reason    TEXT    NOT NULL,
  by_actor  TEXT    NOT NULL,
  by_basis  TEXT    NOT NULL,
  at_ms     INTEGER NOT NULL, reaches_running INTEGER NOT NULL DEFAULT 0 CHECK (reaches_running IN (0, 1)),
  PRIMARY KEY (tenant, scope)
) STRICT, WITHOUT ROWID;

-- table quota_passes
CREATE TABLE quota_passes (
  id                   INTEGER PRIMARY KEY,
  tenant               TEXT    NOT NULL,
  run_id               TEXT    NOT NULL,
  epoch                INTEGER NOT NULL CHECK (epoch >= 1),
  period               TEXT    NOT NULL,
  takes_slot           INTEGER NOT NULL CHECK (takes_slot IN (0, 1)),
  started_at_ms        INTEGER NOT NULL,
  lease_expires_at_ms  INTEGER NOT NULL,
  settled_at_ms        INTEGER,
  hold_tokens          INTEGER,
  hold_minor_units     INTEGER,
  receipt_tokens       INTEGER CHECK (receipt_tokens >= 0),
  receipt_minor_units  INTEGER CHECK (receipt_minor_units >= 0),
  receipt_concludes    INTEGER CHECK (receipt_concludes IN (0, 1)),
  UNIQUE (run_id, tenant, epoch)
) STRICT;

-- table quota_plane
CREATE TABLE quota_plane (
  id            INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  ceiling_json  TEXT    NOT NULL
) STRICT;

-- table quota_plane_halt
CREATE TABLE quota_plane_halt (
  id               INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
  reason           TEXT    NOT NULL,
  by_actor         TEXT    NOT NULL,
  by_basis         TEXT    NOT NULL,
  at_ms            INTEGER NOT NULL,
  reaches_running  INTEGER NOT NULL CHECK (reaches_running IN (0, 1))
) STRICT;

-- table quota_pruned
CREATE TABLE quota_pruned (
  tenant        TEXT    NOT NULL,
  run_id        TEXT    NOT NULL,
  status        TEXT    NOT NULL CHECK (status IN ('concluded', 'released')),
  last_epoch    INTEGER NOT NULL CHECK (last_epoch >= 1),
  closed_at_ms  INTEGER NOT NULL,
  pruned_at_ms  INTEGER NOT NULL,
  PRIMARY KEY (tenant, run_id)
) STRICT, WITHOUT ROWID;

-- table quota_rate
CREATE TABLE quota_rate (
  tenant          TEXT    NOT NULL,
  grant_ref       TEXT    NOT NULL,
  ordinal         INTEGER NOT NULL CHECK (ordinal >= 1),
  run_id          TEXT    NOT NULL,
  dispatch        TEXT    NOT NULL,
  reserved_at_ms  INTEGER NOT NULL,
  PRIMARY KEY (tenant, grant_ref, ordinal)
) STRICT, WITHOUT ROWID;

-- table quota_rate_grants
CREATE TABLE quota_rate_grants (
  tenant          TEXT    NOT NULL,
  grant_ref       TEXT    NOT NULL,
  last_ordinal    INTEGER NOT NULL CHECK (last_ordinal >= 1),
  last_at_ms      INTEGER NOT NULL,
  PRIMARY KEY (tenant, grant_ref)
) STRICT, WITHOUT ROWID;

-- table quota_reserved
CREATE TABLE quota_reserved (
  tenant       TEXT    NOT NULL,
  run_id       TEXT    NOT NULL,
  period       TEXT    NOT NULL,
  tokens       INTEGER NOT NULL CHECK (tokens >= 0),
  minor_units  INTEGER NOT NULL CHECK (minor_units >= 0),
  -- The UTC day a month's hold was taken or carried on, so the hold also counts in that day
  -- whatever period kind is in force later; a day's hold keeps its day.
  day          TEXT,
  -- The agent of the run holding it (NULL without one): its spend counts against that agent's
  -- ceilings.
  agent_name   TEXT,
  PRIMARY KEY (tenant, run_id)
) STRICT, WITHOUT ROWID;

-- table quota_running
CREATE TABLE quota_running (
  tenant          TEXT    NOT NULL,
  run_id          TEXT    NOT NULL,
  admitted_at_ms  INTEGER NOT NULL,
  agent_name      TEXT,
  PRIMARY KEY (tenant, run_id)
) STRICT, WITHOUT ROWID;

-- table quota_runs
CREATE TABLE quota_runs (
  id              INTEGER PRIMARY KEY,
  tenant          TEXT    NOT NULL,
  run_id          TEXT    NOT NULL,
  status          TEXT    NOT NULL,
  agent_name      TEXT,
  agent_digest    TEXT,
  chain_json      TEXT,
  budget_json     TEXT    NOT NULL,
  width           INTEGER NOT NULL CHECK (width >= 0),
  admitted_at_ms  INTEGER NOT NULL,
  last_epoch      INTEGER NOT NULL CHECK (last_epoch >= 1),
  -- when the run entered its status (Unix ms), so attention can say how long it has been there
  status_since_ms INTEGER,
  UNIQUE (tenant, run_id)
) STRICT;

-- table quota_settled
CREATE TABLE quota_settled (
  tenant        TEXT    NOT NULL,
  run_id        TEXT    NOT NULL,
  epoch         INTEGER NOT NULL CHECK (epoch >= 1),
  period        TEXT,
  tokens        INTEGER NOT NULL CHECK (tokens >= 0),
  minor_units   INTEGER NOT NULL CHECK (minor_units >= 0),
  release_slot  INTEGER NOT NULL CHECK (release_slot IN (0, 1)),
  concludes     INTEGER NOT NULL CHECK (concludes IN (0, 1)),
  PRIMARY KEY (tenant, run_id, epoch)
) STRICT, WITHOUT ROWID;

-- table quota_spent
CREATE TABLE quota_spent (
  tenant       TEXT    NOT NULL,
  period       TEXT    NOT NULL,
  tokens       INTEGER NOT NULL CHECK (tokens >= 0),
  minor_units  INTEGER NOT NULL CHECK (minor_units >= 0),
  PRIMARY KEY (tenant, period)
) STRICT, WITHOUT ROWID;

-- table quota_tenants
CREATE TABLE quota_tenants (
  tenant      TEXT NOT NULL PRIMARY KEY,
  quota_json  TEXT NOT NULL
) STRICT, WITHOUT ROWID;

-- table quota_wait_turns
CREATE TABLE quota_wait_turns (
  tenant  TEXT    NOT NULL PRIMARY KEY,
  vtime   INTEGER NOT NULL CHECK (vtime >= 0)
) STRICT, WITHOUT ROWID;

-- table quota_waiters
CREATE TABLE quota_waiters (
  tenant               TEXT    NOT NULL,
  run_id               TEXT    NOT NULL,
  seq                  INTEGER NOT NULL CHECK (seq >= 1),
  state                TEXT    NOT NULL CHECK (state IN ('waiting', 'granted', 'refused')),
  request_json         TEXT    NOT NULL,
  enqueued_at_ms       INTEGER NOT NULL,
  wait_until_ms        INTEGER NOT NULL,
  lease_expires_at_ms  INTEGER NOT NULL,
  decided_at_ms        INTEGER,
  PRIMARY KEY (tenant, run_id)
) STRICT, WITHOUT ROWID;

-- table quotaplane_api_keys
CREATE TABLE quotaplane_api_keys (
  key_id         TEXT    NOT NULL PRIMARY KEY,
  key_hash       TEXT    NOT NULL UNIQUE,
  name           TEXT    NOT NULL,
  role           TEXT    NOT NULL CHECK (role IN ('runner', 'operator')),
  tenant         TEXT    NOT NULL,
  created_at_ms  INTEGER NOT NULL,
  revoked_at_ms  INTEGER, expires_at_ms INTEGER, last_used_at_ms INTEGER,
  -- a runner key acts for exactly one tenant; only an operator key may cover every tenant
  CHECK (role = 'operator' OR tenant <> '*')
) STRICT;

-- table quotaplane_key_sessions
CREATE TABLE quotaplane_key_sessions (
  session_hash   TEXT    NOT NULL PRIMARY KEY,
  key_id         TEXT    NOT NULL,
  created_at_ms  INTEGER NOT NULL,
  expires_at_ms  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- table quotaplane_schema
CREATE TABLE quotaplane_schema (
  version        INTEGER NOT NULL PRIMARY KEY,
  name           TEXT    NOT NULL,
  applied_at_ms  INTEGER NOT NULL
) STRICT;

-- table quotaplane_webhook_deliveries
CREATE TABLE quotaplane_webhook_deliveries (
  delivery_id         TEXT    NOT NULL PRIMARY KEY,
  endpoint_id         TEXT    NOT NULL,
  tenant              TEXT,
  event_seq           INTEGER NOT NULL,
  event_json          TEXT    NOT NULL,
  status              TEXT    NOT NULL,
  attempts            INTEGER NOT NULL,
  due_at_ms           INTEGER NOT NULL,
  claim               TEXT,
  created_at_ms       INTEGER NOT NULL,
  last_attempt_at_ms  INTEGER,
  last_result         TEXT,
  delivered_at_ms     INTEGER
) STRICT, WITHOUT ROWID;

-- table quotaplane_webhook_endpoints
CREATE TABLE quotaplane_webhook_endpoints (
  endpoint_id       TEXT    NOT NULL PRIMARY KEY,
  tenant            TEXT,
  url               TEXT    NOT NULL,
  event_types_json  TEXT,
  secrets_json      TEXT    NOT NULL,
  after_seq         INTEGER NOT NULL,
  created_at_ms     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- index quota_audit_by_action
CREATE INDEX quota_audit_by_action ON quota_audit (tenant, action, seq);

-- index quota_call_reservations_closed
CREATE INDEX quota_call_reservations_closed ON quota_call_reservations (tenant, closed_at_ms) WHERE status <> 'open';

-- index quota_call_reservations_open
CREATE INDEX quota_call_reservations_open ON quota_call_reservations (tenant, deadline_ms) WHERE status = 'open';

-- index quota_events_by_tenant
CREATE UNIQUE INDEX quota_events_by_tenant ON quota_events (tenant, retired_by, event_key);

-- index quota_passes_overran
CREATE INDEX quota_passes_overran ON quota_passes (tenant, run_id, epoch)
  WHERE receipt_tokens IS NOT NULL AND hold_tokens IS NOT NULL
    AND ((hold_tokens > 0 AND receipt_tokens > hold_tokens) OR (hold_minor_units > 0 AND receipt_minor_units > hold_minor_units));

-- index quota_passes_unsettled
CREATE INDEX quota_passes_unsettled ON quota_passes (tenant, lease_expires_at_ms) WHERE settled_at_ms IS NULL;

-- index quota_rate_by_instant
CREATE INDEX quota_rate_by_instant ON quota_rate (tenant, grant_ref, reserved_at_ms);

-- index quota_rate_by_key
CREATE UNIQUE INDEX quota_rate_by_key ON quota_rate (tenant, grant_ref, run_id, dispatch);

-- index quota_running_by_agent
CREATE INDEX quota_running_by_agent ON quota_running (agent_name, tenant) WHERE agent_name IS NOT NULL;

-- index quota_runs_running
CREATE INDEX quota_runs_running ON quota_runs (tenant, run_id) WHERE status = 'running';

-- index quota_waiters_by_seq
CREATE UNIQUE INDEX quota_waiters_by_seq ON quota_waiters (tenant, seq);

-- index quotaplane_key_sessions_by_expiry
CREATE INDEX quotaplane_key_sessions_by_expiry ON quotaplane_key_sessions (expires_at_ms);

-- index quotaplane_webhook_deliveries_by_endpoint
CREATE UNIQUE INDEX quotaplane_webhook_deliveries_by_endpoint ON quotaplane_webhook_deliveries (endpoint_id, event_seq);

-- index quotaplane_webhook_deliveries_by_tenant
CREATE INDEX quotaplane_webhook_deliveries_by_tenant ON quotaplane_webhook_deliveries (tenant);

-- index quotaplane_webhook_deliveries_due
CREATE INDEX quotaplane_webhook_deliveries_due ON quotaplane_webhook_deliveries (status, due_at_ms);

-- index quotaplane_webhook_endpoints_by_tenant
CREATE INDEX quotaplane_webhook_endpoints_by_tenant ON quotaplane_webhook_endpoints (tenant);
