/**
 * Version 2 of the SQLite schema: the API keys of the HTTP service (issue #4). A key is not a
 * tenant row (an operator key may cover every tenant, `'*'`), so this table does not lead with
 * `tenant`. Only the SHA-256 of a key's secret is stored, never the secret, so a copy of the file
 * gives nobody a working key. `revoked_at_ms` stays NULL while the key is usable; a revoked key is
 * kept, so `keys list` still shows who acted with it.
 */
export const SQLITE_SCHEMA_V2 = `
CREATE TABLE quotaplane_api_keys (
  key_id         TEXT    NOT NULL PRIMARY KEY,
  key_hash       TEXT    NOT NULL UNIQUE,
  name           TEXT    NOT NULL,
  role           TEXT    NOT NULL CHECK (role IN ('runner', 'operator')),
  tenant         TEXT    NOT NULL,
  created_at_ms  INTEGER NOT NULL,
  revoked_at_ms  INTEGER,
  -- a runner key acts for exactly one tenant; only an operator key may cover every tenant
  CHECK (role = 'operator' OR tenant <> '*')
) STRICT;
`;
