import { QuotaError } from '../core/errors.js';

/**
 * Why a store cannot be used as configured, in `details.reason` of a
 * `STORE_MISCONFIGURED` fault:
 * - `no-store`: nothing quotaplane wrote is there (a missing file, schema or table; an empty file);
 * - `foreign`: the database holds another application's tables and no quotaplane schema;
 * - `needs-migration`: an older quotaplane wrote it; `quotaplane migrate` brings it up to date;
 * - `pre-release`: a build before release 0.1.0 wrote it, in a layout no release reads or upgrades;
 *   it must be made afresh;
 * - `credentials`: the server refused the user or password;
 * - `no-database`: the database named does not exist;
 * - `no-host`: the host name does not resolve;
 * - `not-writable`: the path cannot be created or written, or the role may not create the schema.
 */
export type MisconfigurationReason =
  | 'no-store'
  | 'foreign'
  | 'needs-migration'
  | 'pre-release'
  | 'credentials'
  | 'no-database'
  | 'no-host'
  | 'not-writable';

/** How a store is opened: whether a missing store is created, and whether an older one is migrated. */
export interface OpenIntent {
  /** Create the file or schema when there is none. @defaultValue true */
  readonly create: boolean;
  /** Apply migrations an older store lacks; when false such a store is `needs-migration`. @defaultValue true */
  readonly migrate: boolean;
}

/**
 * The `STORE_MISCONFIGURED` fault: `where` names the store (a path, or a URL with its password
 * redacted), `message` says what is wrong and what to do. Never retryable.
 */
export function storeMisconfigured(reason: MisconfigurationReason, where: string, message: string, cause?: unknown): QuotaError {
  return new QuotaError('STORE_MISCONFIGURED', message, {
    details: { reason, where },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The fault of a store an older quotaplane wrote, opened by a caller that does not migrate. */
export function needsMigration(backend: string, where: string, foundVersion: number, currentVersion: number, storeFlag: string): QuotaError {
  return storeMisconfigured(
    'needs-migration',
    where,
    `the ${backend} store at ${where} is at schema version ${foundVersion}, and this quotaplane reads version ${currentVersion}; ` +
      `run \`quotaplane migrate --store ${storeFlag}\` (or start \`quotaplane serve\`, which migrates) first`,
  );
}
