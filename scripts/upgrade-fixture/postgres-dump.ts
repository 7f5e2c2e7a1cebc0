// A plain SQL dump of one quotaplane PostgreSQL schema, made without pg_dump (no pg_dump matching
// the embedded server's version is at hand): the schema's DDL as the release's migrator makes it
// (the version table, then the text of each migration the schema records, verbatim), then one
// INSERT per row of every table, in a stable order. The quoted schema name is written as
// `:QUOTAPLANE_SCHEMA`, the migrations' own placeholder, so a test loads it into any schema
// (test/upgrade/upgrade-fixture.ts). Used by scripts/make-upgrade-fixture.ts.
import type pg from 'pg';

import type { Migration } from '../../src/store/migrations.js';
import { DUMP_SCHEMA_PLACEHOLDER } from '../../test/upgrade/upgrade-fixture.js';

/** The version table exactly as the migrator creates it (src/store/postgres/postgres-migrations.ts). */
const VERSION_TABLE = `CREATE TABLE IF NOT EXISTS ${DUMP_SCHEMA_PLACEHOLDER}.quotaplane_schema (
           version        INTEGER NOT NULL PRIMARY KEY,
           name           TEXT    NOT NULL,
           applied_at_ms  BIGINT  NOT NULL
         );`;

/**
 * Dumps `schema` (its plain name) through `client`. `migrations` are the build's migration files
 * with the placeholder unreplaced; the schema must record exactly their versions, else this throws
 * (the dump's DDL would not be the schema's).
 */
export async function dumpPostgresSchema(client: pg.Client, schema: string, migrations: readonly Migration[], header: readonly string[]): Promise<string> {
  const s = client.escapeIdentifier(schema);
  const recorded = (await client.query<{ version: number; name: string }>(`SELECT version, name FROM ${s}.quotaplane_schema ORDER BY version`)).rows;
  const expected = migrations.map((migration) => ({ version: migration.version, name: migration.name }));
  if (JSON.stringify(recorded) !== JSON.stringify(expected)) {
    throw new Error(`schema ${schema} records migrations ${JSON.stringify(recorded)}, this build has ${JSON.stringify(expected)}`);
  }
  const out: string[] = [...header.map((line) => `-- ${line}`), '', `CREATE SCHEMA ${DUMP_SCHEMA_PLACEHOLDER};`, VERSION_TABLE, ''];
  for (const migration of migrations) {
    out.push(`-- ── migration ${migration.version} ${migration.name}, verbatim ──`, migration.sql.trimEnd(), '');
  }
  out.push('-- ── the rows ──');
  const tables = (
    await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c WHERE c.relnamespace = $1::text::regnamespace AND c.relkind IN ('r', 'p') ORDER BY c.relname COLLATE "C"`,
      [schema],
    )
  ).rows;
  for (const { name } of tables) {
    const columns = (
      await client.query<{ name: string }>(
        `SELECT a.attname AS name FROM pg_attribute a
          WHERE a.attrelid = ($1::text || '.' || $2::text)::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
        [s, client.escapeIdentifier(name)],
      )
    ).rows.map((column) => client.escapeIdentifier(column.name));
    const literals = columns.map((column) => `quote_nullable(${column}::text)`).join(', ');
    const order = columns.map((column) => `quote_nullable(${column}::text) COLLATE "C"`).join(', ');
    const rows = (await client.query<string[]>({ text: `SELECT ${literals} FROM ${s}.${client.escapeIdentifier(name)} ORDER BY ${order}`, rowMode: 'array' })).rows;
    for (const row of rows) {
      out.push(`INSERT INTO ${DUMP_SCHEMA_PLACEHOLDER}.${client.escapeIdentifier(name)} (${columns.join(', ')}) VALUES (${row.join(', ')});`);
    }
  }
  return `${out.join('\n')}\n`;
}
