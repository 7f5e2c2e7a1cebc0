import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import pg from 'pg';

import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

/** Where the committed snapshots live, relative to the repository root. */
export const SNAPSHOT_PATHS = { postgres: 'test/schema/postgres.sql', sqlite: 'test/schema/sqlite.sql' } as const;

/** The schema name the PostgreSQL snapshot is written under: the default one. */
const SNAPSHOT_SCHEMA = 'quotaplane';

const REFRESH = 'Generated from a live database by test/schema/schema-snapshot.ts: refresh it with `npm run snapshot:schema`, never by hand.';

/**
 * The schema of a store this build creates, as SQL text read back from a live SQLite database:
 * every object of `sqlite_master` as SQLite keeps it (comments inside a statement included), tables
 * first, then indexes, each group by name, and the applied migrations.
 */
export async function sqliteSchemaSnapshot(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'quotaplane-snapshot-'));
  try {
    const path = join(dir, 'snapshot.db');
    const store = await openSqliteStore(path);
    await store.close();
    const db = new Database(path, { readonly: true });
    try {
      return sqliteSnapshotOf(db);
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** {@link sqliteSchemaSnapshot} of an open database (a store created by any build). */
export function sqliteSnapshotOf(db: Database.Database): string {
  const objects = db
    .prepare(
      `SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL
        ORDER BY CASE type WHEN 'table' THEN 1 WHEN 'index' THEN 2 WHEN 'view' THEN 3 ELSE 4 END, name`,
    )
    .all() as { type: string; name: string; sql: string }[];
  const versions = db.prepare('SELECT version, name FROM quotaplane_schema ORDER BY version').all() as { version: number; name: string }[];
  return [
    `-- The schema of a new quotaplane SQLite store. ${REFRESH}`,
    `-- Applied migrations: ${versions.map((row) => `${row.version} ${row.name}`).join(', ')}`,
    '',
    ...objects.map((object) => `-- ${object.type} ${object.name}\n${object.sql};\n`),
  ].join('\n');
}

/**
 * The schema of a store this build creates on the PostgreSQL server at `url`, as SQL text read
 * back from the catalogs: domains, tables (columns, constraints, storage options), indexes, views,
 * sequences, triggers and functions (as `pg_get_functiondef` prints them), each group by name, and
 * the applied migrations. The store is created in a fresh schema, which is dropped again; its name
 * is written as `quotaplane`, the default.
 */
export async function postgresSchemaSnapshot(url: string): Promise<string> {
  const schema = `qp_snapshot_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
  const store = await openPostgresStore(url, { schema });
  await store.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await postgresSnapshotOf(client, schema);
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`).catch(() => undefined);
    await client.end();
  }
}

/** {@link postgresSchemaSnapshot} of an existing store in `schema` (created by any build). */
export async function postgresSnapshotOf(client: pg.Client, schema: string): Promise<string> {
  // Every name outside pg_catalog comes out schema-qualified, whatever the role's search_path.
  await client.query('SET search_path = pg_catalog');
  const rows = async <Row extends pg.QueryResultRow>(sql: string, values: unknown[] = [schema]): Promise<Row[]> =>
    (await client.query<Row>(sql, values)).rows;
  const out: string[] = [];
  const versions = await rows<{ version: number; name: string }>(
    `SELECT version, name FROM ${client.escapeIdentifier(schema)}.quotaplane_schema ORDER BY version`,
    [],
  );
  out.push(
    `-- The schema of a new quotaplane PostgreSQL store, in schema "${SNAPSHOT_SCHEMA}". ${REFRESH}`,
    `-- Applied migrations: ${versions.map((row) => `${row.version} ${row.name}`).join(', ')}`,
    '',
  );

  const domains = await rows<{ name: string; base: string; not_null: boolean; checks: string }>(
    `SELECT t.typname AS name, format_type(t.typbasetype, t.typtypmod) AS base, t.typnotnull AS not_null,
            coalesce((SELECT string_agg(' CONSTRAINT ' || quote_ident(c.conname) || ' ' || pg_get_constraintdef(c.oid), '' ORDER BY c.conname)
                        FROM pg_constraint c WHERE c.contypid = t.oid AND c.contype <> 'n'), '') AS checks
       FROM pg_type t WHERE t.typnamespace = $1::text::regnamespace AND t.typtype = 'd' ORDER BY t.typname`,
  );
  for (const domain of domains) {
    out.push(`CREATE DOMAIN ${schema}.${domain.name} AS ${domain.base}${domain.not_null ? ' NOT NULL' : ''}${domain.checks};`);
  }
  const enums = await rows<{ name: string; labels: string }>(
    `SELECT t.typname AS name, string_agg(quote_literal(e.enumlabel), ', ' ORDER BY e.enumsortorder) AS labels
       FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
      WHERE t.typnamespace = $1::text::regnamespace GROUP BY t.typname ORDER BY t.typname`,
  );
  for (const type of enums) out.push(`CREATE TYPE ${schema}.${type.name} AS ENUM (${type.labels});`);
  out.push('');

  const tables = await rows<{ oid: number; name: string; options: string | null }>(
    `SELECT c.oid, c.relname AS name, array_to_string(c.reloptions, ', ') AS options
       FROM pg_class c WHERE c.relnamespace = $1::text::regnamespace AND c.relkind IN ('r', 'p') ORDER BY c.relname`,
  );
  for (const table of tables) {
    const columns = await rows<{ name: string; type: string; collation: string | null; not_null: boolean; fallback: string | null }>(
      `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type,
              CASE WHEN a.attcollation <> 0 AND a.attcollation <> t.typcollation
                   THEN (SELECT quote_ident(l.collname) FROM pg_collation l WHERE l.oid = a.attcollation) END AS collation,
              a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS fallback
         FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
      [table.oid],
    );
    const constraints = await rows<{ name: string; definition: string }>(
      `SELECT conname AS name, pg_get_constraintdef(oid) AS definition FROM pg_constraint
        WHERE conrelid = $1 AND contype <> 'n' ORDER BY conname`,
      [table.oid],
    );
    const lines = [
      ...columns.map(
        (column) =>
          `  ${column.name} ${column.type}${column.collation === null ? '' : ` COLLATE ${column.collation}`}` +
          `${column.not_null ? ' NOT NULL' : ''}${column.fallback === null ? '' : ` DEFAULT ${column.fallback}`}`,
      ),
      ...constraints.map((constraint) => `  CONSTRAINT ${constraint.name} ${constraint.definition}`),
    ];
    out.push(`CREATE TABLE ${schema}.${table.name} (\n${lines.join(',\n')}\n)${table.options ? ` WITH (${table.options})` : ''};`, '');
  }

  const indexes = await rows<{ definition: string }>(
    'SELECT indexdef AS definition FROM pg_indexes WHERE schemaname = $1 ORDER BY tablename, indexname',
  );
  for (const index of indexes) out.push(`${index.definition};`);
  out.push('');

  const views = await rows<{ name: string; definition: string }>(
    `SELECT c.relname AS name, pg_get_viewdef(c.oid) AS definition FROM pg_class c
      WHERE c.relnamespace = $1::text::regnamespace AND c.relkind IN ('v', 'm') ORDER BY c.relname`,
  );
  for (const view of views) out.push(`CREATE VIEW ${schema}.${view.name} AS\n${view.definition}`, '');
  const sequences = await rows<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c WHERE c.relnamespace = $1::text::regnamespace AND c.relkind = 'S' ORDER BY c.relname`,
  );
  for (const sequence of sequences) out.push(`CREATE SEQUENCE ${schema}.${sequence.name};`);
  const triggers = await rows<{ definition: string }>(
    `SELECT pg_get_triggerdef(g.oid) AS definition FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
      WHERE c.relnamespace = $1::text::regnamespace AND NOT g.tgisinternal ORDER BY c.relname, g.tgname`,
  );
  for (const trigger of triggers) out.push(`${trigger.definition};`);

  const functions = await rows<{ definition: string }>(
    `SELECT pg_get_functiondef(p.oid) AS definition FROM pg_proc p
      WHERE p.pronamespace = $1::text::regnamespace AND p.prokind IN ('f', 'p')
      ORDER BY p.proname, pg_get_function_identity_arguments(p.oid)`,
  );
  for (const fn of functions) out.push(`${fn.definition.trimEnd()};`, '');

  // The fresh schema's name is unique, so every occurrence of it is the schema.
  return `${out.join('\n').trimEnd()}\n`.replaceAll(schema, SNAPSHOT_SCHEMA);
}
