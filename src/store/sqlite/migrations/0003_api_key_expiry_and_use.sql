-- Version 3 of the SQLite schema: an API key may expire, and records when it was last used.
-- expires_at_ms: Unix ms from which the key is refused (NULL: never, as every key made before this
-- version); rotation sets it on the old key. last_used_at_ms: Unix ms of a request the key
-- authenticated, written at most once a minute per key per server (NULL: never recorded).
ALTER TABLE quotaplane_api_keys ADD COLUMN expires_at_ms INTEGER;
ALTER TABLE quotaplane_api_keys ADD COLUMN last_used_at_ms INTEGER;

-- Dashboard sessions: a short-lived cookie token exchanged for an API key (POST /v1/session), kept
-- here so signing out ends it for every server on the store. Only the SHA-256 of the token is kept.
-- A session acts as its key and ends with it: lookups join the key, so a revoked, expired or
-- deleted key ends its sessions at once.
CREATE TABLE quotaplane_key_sessions (
  session_hash   TEXT    NOT NULL PRIMARY KEY,
  key_id         TEXT    NOT NULL,
  created_at_ms  INTEGER NOT NULL,
  expires_at_ms  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX quotaplane_key_sessions_by_expiry ON quotaplane_key_sessions (expires_at_ms);
