import type { QuotaStore } from './store.js';
import { parseStoreUrl } from './store-url.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';
import { validated } from './validated-store.js';

/** Options of {@link openStore}; each applies only to the backends that name it. */
export interface OpenStoreOptions {
  /**
   * SQLite: how long a transaction waits for another process's write lock before failing with
   * `STORE_UNAVAILABLE`, in ms. @defaultValue 5000
   */
  readonly busyTimeoutMs?: number;
  /**
   * Whether a missing store is created: a SQLite file, or a PostgreSQL schema and its tables.
   * `false` for read-only callers: where there is no quotaplane store, the open throws
   * `STORE_MISCONFIGURED` with `details.reason = 'no-store'` and creates nothing.
   * A SQLite file or a PostgreSQL schema that holds another application's tables is refused
   * either way (`foreign`). @defaultValue true
   */
  readonly create?: boolean;
  /**
   * Whether a store an older quotaplane wrote is migrated. `false` for read-only callers: such a
   * store throws `STORE_MISCONFIGURED` (`needs-migration`, naming `quotaplane migrate`) and is not
   * changed. @defaultValue true
   */
  readonly migrate?: boolean;
  /** PostgreSQL only: the schema that holds quotaplane's tables. */
  readonly schema?: string;
  /** PostgreSQL only: connections in this instance's pool. @defaultValue 4 */
  readonly poolSize?: number;
  /**
   * PostgreSQL only: most decisions one batch carries (one transaction: the tenants'
   * locks and rows loaded in one statement, the changed rows written in one), 1 … 64. @defaultValue 32
   */
  readonly maxBatch?: number;
  /** PostgreSQL only: most batches in flight at once, each on its own connection. @defaultValue half the pool, at least 1 */
  readonly batchLanes?: number;
}

/** The shape of the PostgreSQL adapter module, loaded only when a postgres URL is opened. */
interface PostgresModule {
  openPostgresStore(url: string, options: OpenStoreOptions): Promise<QuotaStore>;
}

// Kept in a variable so this module compiles and loads without the PostgreSQL adapter (and `pg`)
// until a postgres URL is actually opened.
const POSTGRES_MODULE = './postgres/postgres-store.js';

/**
 * Opens the store a URL names and migrates it, and answers it wrapped in `validated()`: every
 * argument of every port method is checked by the one set of input rules (`INVALID_ARGUMENT`
 * naming the field). A plane given this store calls the adapter underneath it, having checked its
 * callers' input with the same rules itself (`unvalidated`).
 * - `sqlite:<path>` (also `sqlite://<path>`) and a bare path ending in `.db`: a SQLite file,
 *   created if missing unless `options.create` is `false`;
 * - `sqlite::memory:`: a private in-memory SQLite database (gone on close);
 * - `postgres://…` or `postgresql://…`: PostgreSQL, loaded on demand.
 * Throws `INVALID_ARGUMENT` on field `url` for anything else, listing the accepted forms (the URL
 * shown with its password as `***`); `STORE_MISCONFIGURED` when the store named cannot be used as
 * configured (see `store-configuration.ts`); the backend's own faults (`STORE_UNAVAILABLE`,
 * `STORE_CORRUPT`, `SCHEMA_TOO_NEW`) otherwise.
 * @example const store = await openStore('sqlite:./quotaplane.db'); const acme = store.tenant('acme');
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<QuotaStore> {
  const location = parseStoreUrl(url);
  if (location.backend === 'postgres') {
    const { openPostgresStore } = (await import(POSTGRES_MODULE)) as PostgresModule;
    return validated(await openPostgresStore(url, options));
  }
  return validated(
    await openSqliteStore(location.path, {
      ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
      ...(options.create === undefined ? {} : { create: options.create }),
      ...(options.migrate === undefined ? {} : { migrate: options.migrate }),
    }),
  );
}
