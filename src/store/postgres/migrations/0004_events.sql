-- Placeholder of the hooks branch for the event log (the lead's migration 0004 replaces it on merge).
CREATE TABLE :QUOTAPLANE_SCHEMA.quota_events (
  seq        BIGSERIAL PRIMARY KEY,
  id         TEXT COLLATE "C" NOT NULL UNIQUE,
  tenant     TEXT COLLATE "C",
  type       TEXT COLLATE "C" NOT NULL,
  at_ms      BIGINT NOT NULL,
  data_json  JSONB  NOT NULL
);
