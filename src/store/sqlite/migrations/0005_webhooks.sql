-- Version 5 of the SQLite schema: webhook endpoints and their deliveries (docs/design/rules.md#h1–#h12).
-- An endpoint: tenant NULL receives every tenant's events and the plane's; event_types_json NULL
-- receives every type, else a JSON array of types; secrets_json the JSON array of its signing
-- secrets ({secret, addedAtMs, expiresAtMs}); after_seq its cursor in quota_events.
CREATE TABLE quotaplane_webhook_endpoints (
  endpoint_id       TEXT    NOT NULL PRIMARY KEY,
  tenant            TEXT,
  url               TEXT    NOT NULL,
  event_types_json  TEXT,
  secrets_json      TEXT    NOT NULL,
  after_seq         INTEGER NOT NULL,
  created_at_ms     INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX quotaplane_webhook_endpoints_by_tenant ON quotaplane_webhook_endpoints (tenant);

-- A delivery: one event owed to one endpoint (delivery_id is '<endpoint_id>.<event_seq>'). tenant
-- is the endpoint's (NULL for a plane-wide endpoint), so a tenant's deletion removes its own
-- endpoints' deliveries. event_json keeps the event whole, so every attempt sends the same body.
-- status: 'pending', 'delivered' or 'failed'; due_at_ms: when it may next be attempted (a claimed
-- one's claim end); claim: the token of the attempt in flight, fencing its report.
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
CREATE UNIQUE INDEX quotaplane_webhook_deliveries_by_endpoint ON quotaplane_webhook_deliveries (endpoint_id, event_seq);
CREATE INDEX quotaplane_webhook_deliveries_due ON quotaplane_webhook_deliveries (status, due_at_ms);
CREATE INDEX quotaplane_webhook_deliveries_by_tenant ON quotaplane_webhook_deliveries (tenant);
