/**
 * Version 3 of the PostgreSQL schema (quoted schema `s`): the API keys of the HTTP service
 * (issue #4), the same table and columns as SQLite's version 2. A key is not a tenant row (an
 * operator key may cover every tenant, `'*'`), so this table does not lead with `tenant`. Only the
 * SHA-256 of a key's secret is stored, never the secret, so a copy of the database gives nobody a
 * working key. `revoked_at_ms` stays NULL while the key is usable; a revoked key is kept.
 */
export function postgresSchemaV3(s: string): string {
  return `
CREATE TABLE ${s}.quotaplane_api_keys (
  key_id         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  key_hash       TEXT COLLATE "C" NOT NULL UNIQUE,
  name           TEXT NOT NULL,
  role           TEXT NOT NULL CHECK (role IN ('runner', 'operator')),
  tenant         TEXT COLLATE "C" NOT NULL,
  created_at_ms  BIGINT NOT NULL,
  revoked_at_ms  BIGINT,
  -- a runner key acts for exactly one tenant; only an operator key may cover every tenant
  CHECK (role = 'operator' OR tenant <> '*')
);
`;
}
