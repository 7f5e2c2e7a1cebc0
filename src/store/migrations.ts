import { QuotaError } from '../core/errors.js';

/**
 * One forward-only schema change of a backend. `version` numbers start at 1 and never repeat;
 * a released migration is never edited, only followed by a new one (docs/contributing.md).
 */
export interface Migration {
  readonly version: number;
  /** Short snake_case description, recorded beside the version. */
  readonly name: string;
  /** The statements that make the change, run inside the migrating transaction. */
  readonly sql: string;
}

/**
 * What opening (migrating) a store did: the schema version found, the version it is at now, and
 * the migrations applied on the way, in order. `applied` is empty when the schema was current.
 * A version of 0 means a database with no quotaplane schema yet.
 */
export interface MigrationReport {
  /** `'sqlite'` or `'postgres'`. */
  readonly backend: string;
  readonly fromVersion: number;
  readonly toVersion: number;
  readonly applied: readonly { readonly version: number; readonly name: string }[];
}

/** The newest version in `migrations` (0 for none): what this build can open and migrate to. */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((latest, migration) => Math.max(latest, migration.version), 0);
}

/**
 * The `SCHEMA_TOO_NEW` fault for a database migrated by a newer quotaplane: opening it would let
 * this build write rows in a shape it does not know. The message says which version was found,
 * which this build supports, and what to do.
 */
export function schemaTooNewError(backend: string, foundVersion: number, supportedVersion: number): QuotaError {
  return new QuotaError(
    'SCHEMA_TOO_NEW',
    `the ${backend} store's schema is at version ${foundVersion}, but this quotaplane build supports versions ` +
      `up to ${supportedVersion}; upgrade quotaplane to the release that migrated it (schemas only move forward)`,
    { details: { backend, foundVersion, supportedVersion } },
  );
}
