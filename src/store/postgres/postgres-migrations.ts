import type pg from 'pg';

import { latestVersion, schemaTooNewError, type Migration, type MigrationReport } from '../migrations.js';
import { POSTGRES_MIGRATION_FILES } from './postgres-migrations.generated.js';

/** What stands for the quoted schema name in the migration files; replaced when a migration is applied. */
export const SCHEMA_PLACEHOLDER = ':QUOTAPLANE_SCHEMA';

/**
 * The PostgreSQL schema history for the quoted schema `s`, oldest first: the files of
 * `migrations/` (compiled into `postgres-migrations.generated.ts`), numbered, forward-only, never
 * edited once released, with {@link SCHEMA_PLACEHOLDER} replaced by `s`. A change is a new file
 * with the next number; a changed decision function is a new `CREATE OR REPLACE` migration
 * (docs/contributing.md).
 */
export function postgresMigrations(s: string): readonly Migration[] {
  return POSTGRES_MIGRATION_FILES.map((migration) => ({ ...migration, sql: migration.sql.replaceAll(SCHEMA_PLACEHOLDER, s) }));
}

/** The schema version this build writes and the newest it can open. */
export const POSTGRES_SCHEMA_VERSION = latestVersion(POSTGRES_MIGRATION_FILES);

/** How long a migrator waits for another one to finish before giving up (`STORE_UNAVAILABLE`). */
export const MIGRATION_LOCK_TIMEOUT_MS = 60_000;

/**
 * Brings schema `schema` (its plain name; `s` is the same name quoted) to
 * {@link POSTGRES_SCHEMA_VERSION}. A current schema is recognised with one read and no lock.
 * Otherwise one transaction takes a transaction-scoped advisory lock keyed by the schema name,
 * creates the schema and the `quotaplane_schema` table if absent, reads the version, and applies
 * each missing migration in order, recording it. A concurrent migrator waits on that lock (up to
 * {@link MIGRATION_LOCK_TIMEOUT_MS}, then fails with the lock timeout, which the caller reports as
 * `STORE_UNAVAILABLE`), then finds the schema current and applies nothing. A database recording a
 * newer version than this build knows is refused with `SCHEMA_TOO_NEW` and nothing changes.
 * Driver errors propagate for the caller to translate.
 */
export async function migratePostgres(
  pool: pg.Pool,
  schema: string,
  s: string,
  appliedAtMs: number,
): Promise<MigrationReport> {
  const current = await readVersion(pool, s);
  if (current === POSTGRES_SCHEMA_VERSION) {
    return { backend: 'postgres', fromVersion: current, toVersion: current, applied: [] };
  }
  if (current !== null && current > POSTGRES_SCHEMA_VERSION) {
    throw schemaTooNewError('postgres', current, POSTGRES_SCHEMA_VERSION);
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    try {
      await client.query(`SET LOCAL lock_timeout = ${MIGRATION_LOCK_TIMEOUT_MS}`);
      await client.query('SET LOCAL statement_timeout = 0');
      // Seed 2: apart from the admission (0) and rate (1) locks, whatever the schema is called.
      await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 2))', [`quotaplane-migrate:${schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${s}.quotaplane_schema (
           version        INTEGER NOT NULL PRIMARY KEY,
           name           TEXT    NOT NULL,
           applied_at_ms  BIGINT  NOT NULL
         )`,
      );
      const found = await client.query<{ version: number }>(
        `SELECT coalesce(max(version), 0) AS version FROM ${s}.quotaplane_schema`,
      );
      const fromVersion = found.rows[0]?.version ?? 0;
      if (fromVersion > POSTGRES_SCHEMA_VERSION) throw schemaTooNewError('postgres', fromVersion, POSTGRES_SCHEMA_VERSION);
      const applied: { version: number; name: string }[] = [];
      for (const migration of postgresMigrations(s)) {
        if (migration.version <= fromVersion) continue;
        // The version row goes in first: a migrator that got here without the lock fails on the
        // primary key instead of applying the change twice.
        await client.query(`INSERT INTO ${s}.quotaplane_schema (version, name, applied_at_ms) VALUES ($1, $2, $3)`, [
          migration.version,
          migration.name,
          appliedAtMs,
        ]);
        await client.query(migration.sql);
        applied.push({ version: migration.version, name: migration.name });
      }
      await client.query('COMMIT');
      return { backend: 'postgres', fromVersion, toVersion: POSTGRES_SCHEMA_VERSION, applied };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  } finally {
    client.release();
  }
}

/** The recorded version, or `null` when the schema or its version table does not exist yet. */
async function readVersion(pool: pg.Pool, s: string): Promise<number | null> {
  const exists = await pool.query<{ present: boolean }>(
    `SELECT to_regclass($1) IS NOT NULL AS present`,
    [`${s}.quotaplane_schema`],
  );
  if (exists.rows[0]?.present !== true) return null;
  const found = await pool.query<{ version: number }>(`SELECT coalesce(max(version), 0) AS version FROM ${s}.quotaplane_schema`);
  return found.rows[0]?.version ?? 0;
}
