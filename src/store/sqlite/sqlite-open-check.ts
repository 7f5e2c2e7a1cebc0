import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type Database from 'better-sqlite3';

import { QuotaError } from '../../core/errors.js';
import { schemaTooNewError } from '../migrations.js';
import { needsMigration, storeMisconfigured, type OpenIntent } from '../store-configuration.js';

/**
 * What opening a SQLite file found before anything was written to it: the
 * schema version quotaplane recorded there, or `null` when the file is new and empty. Reads
 * `sqlite_master` and the version table only, so a file that is refused is left byte for byte as
 * it was. Throws `STORE_MISCONFIGURED`:
 * - `foreign` when the file holds tables but no `quotaplane_schema` (another application's
 *   database): quotaplane never adds its tables to it, whatever `intent` says;
 * - `no-store` when the file is empty and `intent.create` is false;
 * - `needs-migration` when an older quotaplane wrote it and `intent.migrate` is false;
 * and `SCHEMA_TOO_NEW` when a newer one did.
 */
export function inspectSqliteFile(db: Database.Database, path: string, intent: OpenIntent, currentVersion: number): number | null {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  if (!tables.some((table) => table.name === 'quotaplane_schema')) {
    if (tables.length > 0) {
      const names = tables.slice(0, 3).map((table) => table.name).join(', ');
      throw storeMisconfigured(
        'foreign',
        path,
        `${path} is a SQLite database with other tables (${names}${tables.length > 3 ? ', …' : ''}) and no quotaplane store; ` +
          'it was left as it was: name a file of its own for quotaplane with --store',
      );
    }
    if (!intent.create) throw noStoreAt(path);
    return null;
  }
  const row = db.prepare('SELECT coalesce(max(version), 0) AS version FROM quotaplane_schema').get() as { version: number };
  if (row.version > currentVersion) throw schemaTooNewError('sqlite', row.version, currentVersion);
  if (row.version < currentVersion && !intent.migrate) throw needsMigration('SQLite', path, row.version, currentVersion, `sqlite:${path}`);
  return row.version;
}

/** The `no-store` fault for a SQLite path with no quotaplane store. */
export function noStoreAt(path: string, cause?: unknown): QuotaError {
  return storeMisconfigured('no-store', path, `no quotaplane store at ${path}; check --store, or create one with \`quotaplane migrate --store sqlite:${path}\``, cause);
}

/**
 * A fault opening a SQLite file that is the configuration's, not a passing outage: a directory
 * that does not exist, a file or directory this user may not create or write, a file that is not
 * a SQLite database. Answers `null` for anything else (the caller translates it as usual).
 */
export function sqliteOpenConfigurationError(error: unknown, path: string): QuotaError | null {
  if (error instanceof QuotaError) return null;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const text = error instanceof Error ? error.message : String(error);
  if (error instanceof TypeError && /directory does not exist/i.test(text)) {
    return storeMisconfigured('not-writable', path, `cannot create ${path}: its directory ${dirname(path)} does not exist; create it or fix --store`, error);
  }
  if (typeof code !== 'string') return null;
  if (code.startsWith('SQLITE_NOTADB')) {
    return storeMisconfigured('foreign', path, `${path} is not a SQLite database, so it holds no quotaplane store; it was left as it was: fix --store`, error);
  }
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_PERM' || code === 'SQLITE_AUTH') {
    return storeMisconfigured('not-writable', path, `${path} cannot be written by this user (${code}); fix its permissions or --store`, error);
  }
  if (code.startsWith('SQLITE_CANTOPEN')) {
    if (existsSync(path) && statSync(path).isDirectory()) {
      return storeMisconfigured('not-writable', path, `${path} is a directory, not a SQLite file (${code}); name a file in it with --store, such as sqlite:${path}/quotaplane.db`, error);
    }
    const reason = existsSync(path) ? 'cannot be opened by this user' : 'cannot be created here';
    return storeMisconfigured('not-writable', path, `${path} ${reason} (${code}); fix its permissions or --store`, error);
  }
  return null;
}
