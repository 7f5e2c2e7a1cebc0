import type Database from 'better-sqlite3';

import { latestVersion, schemaTooNewError, type Migration, type MigrationReport } from '../migrations.js';
import { SQLITE_MIGRATION_FILES } from './sqlite-migrations.generated.js';

/**
 * The SQLite schema history, oldest first: the files of `migrations/` (compiled into
 * `sqlite-migrations.generated.ts`), numbered, forward-only, never edited once released. A change
 * is a new file with the next number (docs/contributing.md).
 */
export const SQLITE_MIGRATIONS: readonly Migration[] = SQLITE_MIGRATION_FILES;

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
