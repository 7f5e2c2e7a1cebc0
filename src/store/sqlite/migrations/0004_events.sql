-- Placeholder of the hooks branch for the event log (the lead's migration 0004 replaces it on merge).
CREATE TABLE quota_events (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  id         TEXT    NOT NULL UNIQUE,
  tenant     TEXT,
  type       TEXT    NOT NULL,
  at_ms      INTEGER NOT NULL,
  data_json  TEXT    NOT NULL
);
