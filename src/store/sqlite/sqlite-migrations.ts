import type Database from 'better-sqlite3';

import { latestVersion, schemaTooNewError, type Migration, type MigrationReport } from '../migrations.js';
import { SQLITE_SCHEMA_V1 } from './sqlite-schema-v1.js';
import { SQLITE_SCHEMA_V2 } from './sqlite-schema-v2.js';

/**
 * The SQLite schema history, oldest first: numbered, forward-only, never edited once released
 * (code-anchors, SQL and migrations). Add a change as a new entry with the next version.
 */
export const SQLITE_MIGRATIONS: readonly Migration[] = Object.freeze([
  { version: 1, name: 'quota_schema', sql: SQLITE_SCHEMA_V1 },
  { version: 2, name: 'retention', sql: SQLITE_SCHEMA_V2 },
]);

/** The schema version this build writes and the newest it can open. */
export const SQLITE_SCHEMA_VERSION = latestVersion(SQLITE_MIGRATIONS);

const CREATE_SCHEMA_TABLE = `
CREATE TABLE IF NOT EXISTS quotaplane_schema (
  version        INTEGER NOT NULL PRIMARY KEY,
  name           TEXT    NOT NULL,
  applied_at_ms  INTEGER NOT NULL
) STRICT`;

/**
 * Brings `db` to {@link SQLITE_SCHEMA_VERSION}, applying each missing migration in order and
 * recording it in `quotaplane_schema`. Runs in one `BEGIN IMMEDIATE` transaction: two processes
 * opening one new file at once serialise on the write lock, and the second finds the schema
 * current and applies nothing. `appliedAtMs` is only bookkeeping, never a decision input.
 * Throws `SCHEMA_TOO_NEW` (nothing changed) when the file records a newer version than this build
 * knows; driver errors propagate for the caller to translate.
 */
export function migrateSqlite(db: Database.Database, appliedAtMs: number): MigrationReport {
  const migrate = db.transaction((): MigrationReport => {
    db.exec(CREATE_SCHEMA_TABLE);
    const row = db.prepare('SELECT coalesce(max(version), 0) AS version FROM quotaplane_schema').get() as {
      version: number;
    };
    const fromVersion = row.version;
    if (fromVersion > SQLITE_SCHEMA_VERSION) throw schemaTooNewError('sqlite', fromVersion, SQLITE_SCHEMA_VERSION);
    const record = db.prepare('INSERT INTO quotaplane_schema (version, name, applied_at_ms) VALUES (?, ?, ?)');
    const applied: { version: number; name: string }[] = [];
    for (const migration of SQLITE_MIGRATIONS) {
      if (migration.version <= fromVersion) continue;
      // The version row goes in first: a second migrator that somehow got this far fails on the
      // primary key instead of applying the change twice.
      record.run(migration.version, migration.name, appliedAtMs);
      db.exec(migration.sql);
      applied.push({ version: migration.version, name: migration.name });
    }
    return { backend: 'sqlite', fromVersion, toVersion: SQLITE_SCHEMA_VERSION, applied };
  });
  return migrate.immediate();
}
