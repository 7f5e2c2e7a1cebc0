import type pg from 'pg';

import { invalidArgument, QuotaError } from '../../core/errors.js';
import { schemaTooNewError } from '../migrations.js';
import { needsMigration, storeMisconfigured, type OpenIntent } from '../store-configuration.js';
import { redactSecrets, redactStoreUrl } from '../store-url.js';

/**
 * What opening a PostgreSQL store found before anything was written: the
 * schema version quotaplane recorded in `schema`, or `null` when the schema does not exist or
 * holds no table at all. Reads the catalog and the version table only; creates nothing. Throws
 * `STORE_MISCONFIGURED`:
 * - `foreign` when the schema holds tables but no `quotaplane_schema` (another application's):
 *   quotaplane never adds its tables there, whatever `intent` says;
 * - `no-store` when there is no quotaplane store and `intent.create` is false;
 * - `needs-migration` when an older quotaplane wrote it and `intent.migrate` is false;
 * and `SCHEMA_TOO_NEW` when a newer one did. `url` is only used, redacted, in messages.
 */
export async function inspectPostgresSchema(
  pool: pg.Pool,
  url: string,
  schema: string,
  s: string,
  intent: OpenIntent,
  currentVersion: number,
): Promise<number | null> {
  const where = `schema ${schema} of ${redactStoreUrl(url)}`;
  const found = await pool.query<{ tables: string | number; versioned: boolean }>(
    'SELECT (SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = $1) AS tables, to_regclass($2) IS NOT NULL AS versioned',
    [schema, `${s}.quotaplane_schema`],
  );
  const tables = Number(found.rows[0]?.tables ?? 0);
  if (found.rows[0]?.versioned !== true) {
    if (tables > 0) {
      throw storeMisconfigured(
        'foreign',
        where,
        `${where} holds ${tables} table(s) of another application and no quotaplane store; nothing was changed: ` +
          'name a schema of its own for quotaplane (?schema=<name>)',
      );
    }
    if (!intent.create) {
      throw storeMisconfigured(
        'no-store',
        where,
        `no quotaplane store in ${where}; check --store and its ?schema=, or create one with \`quotaplane migrate --store <url>\``,
      );
    }
    return null;
  }
  const version = await pool.query<{ version: number }>(`SELECT coalesce(max(version), 0) AS version FROM ${s}.quotaplane_schema`);
  const foundVersion = version.rows[0]?.version ?? 0;
  if (foundVersion > currentVersion) throw schemaTooNewError('postgres', foundVersion, currentVersion);
  if (foundVersion < currentVersion && !intent.migrate) throw needsMigration('PostgreSQL', where, foundVersion, currentVersion, "'<url>'");
  // Builds before release 0.1.0 recorded version 1 too, for a layout that decided in server-side
  // functions; the release's version 1 keeps each tenant's books' version in quota_book_versions.
  if (foundVersion >= 1) {
    const released = await pool.query<{ released: boolean }>('SELECT to_regclass($1) IS NOT NULL AS released', [`${s}.quota_book_versions`]);
    if (released.rows[0]?.released !== true) {
      throw storeMisconfigured(
        'pre-release',
        where,
        `${where} was made by a build of quotaplane before release 0.1.0, whose layout no release reads or upgrades; nothing was changed: ` +
          'drop the schema and let quotaplane create it afresh, or name another one (?schema=<name>)',
      );
    }
  }
  return foundVersion;
}

// SQLSTATEs that, while a store is being opened, mean its configuration is wrong and waiting will
// not help (PostgreSQL manual, appendix A).
const CONFIGURATION_STATES: Readonly<Record<string, { reason: 'credentials' | 'no-database' | 'not-writable'; what: string }>> = {
  '28P01': { reason: 'credentials', what: 'the server refused the password' },
  '28000': { reason: 'credentials', what: 'the server refused this user or connection (pg_hba.conf)' },
  '3D000': { reason: 'no-database', what: 'the database does not exist' },
  '42501': { reason: 'not-writable', what: 'the role may not create the schema or its tables (it needs CREATE on the database)' },
};

/**
 * A fault opening a PostgreSQL store that is the configuration's, not a passing outage: a refused
 * password or user, a database that does not exist, a role without the privilege to create the
 * schema, a host name that does not resolve. Answers `null` for anything else. The message names
 * the URL with its password as `***` and never holds the password.
 */
export function postgresOpenConfigurationError(error: unknown, url: string): QuotaError | null {
  if (error instanceof QuotaError) return null;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  const text = redactSecrets(error instanceof Error ? error.message : String(error), url);
  const where = redactStoreUrl(url);
  if (typeof code !== 'string') return null;
  if (code === 'ERR_INVALID_URL') {
    return invalidArgument(
      'url',
      `${where} cannot be read as a PostgreSQL URL: give the port as digits, and percent-encode any of / ? # @ : [ ] in the user name or password (# as %23, / as %2F, ? as %3F, @ as %40, : as %3A)`,
    );
  }
  const known = CONFIGURATION_STATES[code];
  if (known !== undefined) {
    return storeMisconfigured(known.reason, where, `${known.what} at ${where} (SQLSTATE ${code}: ${text}); fix --store`, error);
  }
  if (code === 'ENOTFOUND') {
    return storeMisconfigured('no-host', where, `the host of ${where} does not resolve (${text}); fix --store`, error);
  }
  return null;
}

/** `error` with every secret of `url` taken out of its message (a `QuotaError` keeps its code, details and cause). */
export function withoutSecrets(error: QuotaError, url: string): QuotaError {
  const message = redactSecrets(error.message, url);
  if (message === error.message) return error;
  return new QuotaError(error.code, message, { details: { ...error.details }, cause: error.cause });
}
