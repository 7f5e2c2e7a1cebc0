-- Version 5 of the PostgreSQL schema: webhook endpoints and their deliveries (docs/design/rules.md#h1–#h12).
-- An endpoint: tenant NULL receives every tenant's events and the plane's; event_types_json NULL
-- receives every type, else a JSON array of types; secrets_json the JSON array of its signing
-- secrets ({secret, addedAtMs, expiresAtMs}); after_seq its cursor in quota_events.
CREATE TABLE :QUOTAPLANE_SCHEMA.quotaplane_webhook_endpoints (
  endpoint_id       TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  tenant            TEXT COLLATE "C",
  url               TEXT   NOT NULL,
  event_types_json  JSONB,
  secrets_json      JSONB  NOT NULL,
  after_seq         BIGINT NOT NULL,
  created_at_ms     BIGINT NOT NULL
);
CREATE INDEX quotaplane_webhook_endpoints_by_tenant ON :QUOTAPLANE_SCHEMA.quotaplane_webhook_endpoints (tenant);

-- A delivery: one event owed to one endpoint (delivery_id is '<endpoint_id>.<event_seq>'). tenant
-- is the endpoint's (NULL for a plane-wide endpoint), so a tenant's deletion removes its own
-- endpoints' deliveries. event_json keeps the event whole, so every attempt sends the same body.
-- status: 'pending', 'delivered' or 'failed'; due_at_ms: when it may next be attempted (a claimed
-- one's claim end); claim: the token of the attempt in flight, fencing its report.
CREATE TABLE :QUOTAPLANE_SCHEMA.quotaplane_webhook_deliveries (
  delivery_id         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  endpoint_id         TEXT COLLATE "C" NOT NULL,
  tenant              TEXT COLLATE "C",
  event_seq           BIGINT NOT NULL,
  event_json          JSONB  NOT NULL,
  status              TEXT COLLATE "C" NOT NULL,
  attempts            INTEGER NOT NULL,
  due_at_ms           BIGINT NOT NULL,
  claim               TEXT COLLATE "C",
  created_at_ms       BIGINT NOT NULL,
  last_attempt_at_ms  BIGINT,
  last_result         TEXT,
  delivered_at_ms     BIGINT
);
CREATE UNIQUE INDEX quotaplane_webhook_deliveries_by_endpoint ON :QUOTAPLANE_SCHEMA.quotaplane_webhook_deliveries (endpoint_id, event_seq);
CREATE INDEX quotaplane_webhook_deliveries_due ON :QUOTAPLANE_SCHEMA.quotaplane_webhook_deliveries (status, due_at_ms);
CREATE INDEX quotaplane_webhook_deliveries_by_tenant ON :QUOTAPLANE_SCHEMA.quotaplane_webhook_deliveries (tenant);
