-- Version 3 of the SQLite schema: an API key may expire, and records when it was last used.
-- expires_at_ms: Unix ms from which the key is refused (NULL: never, as every key made before this
-- version); rotation sets it on the old key. last_used_at_ms: Unix ms of a request the key
-- authenticated, written at most once a minute per key per server (NULL: never recorded).
ALTER TABLE quotaplane_api_keys ADD COLUMN expires_at_ms INTEGER;
ALTER TABLE quotaplane_api_keys ADD COLUMN last_used_at_ms INTEGER;
