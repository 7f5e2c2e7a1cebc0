import { LocalWaiterWakes, type WaiterWakes } from '../waiter-wakes.js';
import { grantEveryQueueInTransaction } from './sqlite-waiters.js';
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';

import { describe } from '../../core/amounts.js';
import { invalidArgument, QuotaError } from '../../core/errors.js';
import { isIdentifier } from '../../core/identifiers.js';
import type { ApiKeyStore } from '../api-keys.js';
import type { MigrationReport } from '../migrations.js';
import type { QuotaStore, TenantStore } from '../store.js';
import { SqliteApiKeyStore } from './sqlite-api-keys.js';
import { SqliteWebhookStore } from './sqlite-webhooks.js';
import { SqliteCallMeterStore } from './sqlite-model-calls.js';
import type { CallMeterStore } from '../port/model-calls.js';
import type { WebhookStore } from '../port/webhooks.js';
import { SqliteConnection } from './sqlite-connection.js';
import { closedStoreError, toQuotaError } from './sqlite-errors.js';
import { migrateSqlite, SQLITE_SCHEMA_VERSION } from './sqlite-migrations.js';
import { inspectSqliteFile, noStoreAt, sqliteOpenConfigurationError } from './sqlite-open-check.js';
import {
  COUNT_PLANE_AGENT_SLOTS,
  COUNT_PLANE_SLOTS,
  DELETE_PLANE_HALT,
  LIST_AUDIT_CHAINS,
  LIST_TENANTS,
  SELECT_PLANE_HALT,
  TENANT_RECORDS,
  UPSERT_PLANE_CEILING,
  UPSERT_PLANE_HALT,
} from './sqlite-queries.js';
import type { Halt } from '../../core/halt-scope.js';
import { decodePlaneHaltRow, sameHalt, type PlaneHaltRow } from '../halt-rows.js';
import { readPlaneHalt } from './sqlite-halts.js';
import { knownTenantOf } from '../known-tenants.js';
import { MAX_AMOUNT } from '../../core/amounts.js';
import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import type { AuditEntry, PlaneUsage } from '../types.js';
import type { QuotaEvent } from '../../core/events.js';
import { appendEventInTransaction, readEventsAfter, readNewestEvents } from './sqlite-events.js';
import { haltLiftedEvent, haltSetEvent } from '../../core/run-events.js';
import { appendAuditInTransaction } from './sqlite-audit.js';
import { readPlaneCeiling } from './sqlite-tenant-books.js';
import { SqliteTenantStore } from './sqlite-tenant-store.js';
import { SQLITE_MEMORY_PATH } from '../store-url.js';

export { SQLITE_MEMORY_PATH };

/**
 * The page size of a store file quotaplane creates, in bytes (SQLite's default is 4,096). A WAL
 * commit writes every page it changed, whole, and a decision changes a few rows of several
 * B-trees, one page each: at 1 KiB a cycle (admit + settle) writes about a quarter of the bytes
 * it writes at 4 KiB. Long rows (audit entries, large agent chains) spill into overflow pages
 * instead. A file created before keeps its page size: SQLite cannot change it
 * in WAL mode.
 */
export const SQLITE_PAGE_SIZE_BYTES = 1024;

/** How long a statement waits for another connection's write lock by default, in ms. */
export const DEFAULT_BUSY_TIMEOUT_MS = 5000;

/** Options of {@link openSqliteStore}. */
export interface SqliteStoreOptions {
  /**
   * How long a decision waits for another process's write lock before the call fails with
   * `STORE_UNAVAILABLE`, in ms. The wait is retried on timers, never by blocking the event loop;
   * only opening (and migrating) a file waits synchronously. @defaultValue 5000
   */
  readonly busyTimeoutMs?: number;
  /**
   * Whether a missing or empty file is created. `false`: a missing file (or directory) throws
   * `STORE_MISCONFIGURED` (`details.reason = 'no-store'`, `details.where` the path), so a
   * read-only caller with a mistyped path neither creates nor migrates a database there. A file
   * with another application's tables is refused either way (`foreign`). @defaultValue true
   */
  readonly create?: boolean;
  /**
   * Whether a file an older quotaplane wrote is migrated. `false` for read-only callers: such a
   * file throws `STORE_MISCONFIGURED` (`needs-migration`) and is not changed. @defaultValue true
   */
  readonly migrate?: boolean;
}

/** How often a waiting admission looks for a grant another process wrote on the same file, ms. */
export const SQLITE_WAIT_POLL_MS = 50;

/**
 * The SQLite adapter of the store port (store.ts `QuotaStore`): one better-sqlite3 connection
 * serving every tenant through {@link SqliteTenantStore} handles. Exact across processes on one
 * host: every deciding transaction is `BEGIN IMMEDIATE` on a WAL-mode file.
 * Open it with {@link openSqliteStore} or `openStore('sqlite:<path>')`.
 */
export class SqliteQuotaStore implements QuotaStore {
  readonly backend = 'sqlite';
  /** The file path, or `:memory:`. */
  readonly path: string;
  /** What opening the store migrated. */
  readonly migration: MigrationReport;
  readonly #conn: SqliteConnection;
  readonly #wakes = new LocalWaiterWakes(SQLITE_WAIT_POLL_MS);

  /** Use {@link openSqliteStore}: the connection must be configured and migrated. */
  constructor(conn: SqliteConnection, path: string, migration: MigrationReport) {
    this.#conn = conn;
    this.path = path;
    this.migration = migration;
  }

  /** A handle confined to `tenant` (checked by `validated()`, not here). Throws `STORE_UNAVAILABLE` once closed. */
  tenant(tenant: string): TenantStore {
    if (this.#conn.isClosed) throw closedStoreError();
    return new SqliteTenantStore(this.#conn, tenant, this.#wakes);
  }

  /** The known tenants in byte order (rules.md#l95): every tenant with a record of any kind of `TENANT_RECORDS`. */
  async tenants(): Promise<string[]> {
    return this.#tenantColumn(LIST_TENANTS);
  }

  /** Every tenant with an audit chain, a deleted one included, in byte order (store.ts `auditChains`). */
  async auditChains(): Promise<string[]> {
    return this.#tenantColumn(LIST_AUDIT_CHAINS);
  }

  async #tenantColumn(sql: string): Promise<string[]> {
    const rows = await this.#conn.read(() => this.#conn.all<{ tenant: string }>(sql, {}));
    return rows.map((row) => {
      if (!isIdentifier(row.tenant)) {
        throw new QuotaError('STORE_CORRUPT', `the store holds rows of an unreadable tenant id ${JSON.stringify(row.tenant)}`);
      }
      return row.tenant;
    });
  }

  /** Whether `tenant` is known (rules.md#l95): one indexed EXISTS per kind of record, decided by `isKnownTenant`. */
  async hasTenant(tenant: string): Promise<boolean> {
    return knownTenantOf(await this.#conn.read(() => this.#conn.get<Record<string, unknown>>(TENANT_RECORDS, { tenant })));
  }

  /** The API keys (`quotaplane_api_keys`), on this store's connection. Throws `STORE_UNAVAILABLE` once closed. */
  apiKeys(): ApiKeyStore {
    if (this.#conn.isClosed) throw closedStoreError();
    return new SqliteApiKeyStore(this.#conn);
  }

  /** The webhook endpoints and deliveries, on this store's connection. Throws `STORE_UNAVAILABLE` once closed. */
  webhooks(): WebhookStore {
    if (this.#conn.isClosed) throw closedStoreError();
    return new SqliteWebhookStore(this.#conn);
  }

  /** The model-call books (docs/design/rules.md#m1), on this store's connection. Throws `STORE_UNAVAILABLE` once closed. */
  callMeters(): CallMeterStore {
    if (this.#conn.isClosed) throw closedStoreError();
    return new SqliteCallMeterStore(this.#conn);
  }

  /**
   * Wakes waiting admissions: a grant written through this store wakes its waiters at
   * once; a grant another process wrote on the file is found within {@link SQLITE_WAIT_POLL_MS}.
   */
  waiterWakes(): WaiterWakes {
    return this.#wakes;
  }

  /** The stored plane-wide ceiling (`quota_plane`), or `null`; an unreadable one throws `STORE_CORRUPT`. */
  async getPlaneCeiling(): Promise<PlaneCeiling | null> {
    return this.#conn.read(() => readPlaneCeiling(this.#conn));
  }

  /** Replaces the plane-wide ceiling and appends `audit` to `auditTenant`'s chain, in one `BEGIN IMMEDIATE` transaction. */
  async setPlaneCeiling(plane: PlaneCeiling, audit: AuditEntry, auditTenant: string): Promise<void> {
    if (this.#conn.isClosed) throw closedStoreError();
    const granted = await this.#conn.write(() => {
      this.#conn.run(UPSERT_PLANE_CEILING, { ceilingJson: JSON.stringify(plane) });
      appendAuditInTransaction(this.#conn, auditTenant, audit);
      // A raised (or removed) plane ceiling admits waiters in this transaction.
      return grantEveryQueueInTransaction(this.#conn, audit.atMs);
    });
    for (const tenant of new Set(granted)) this.#wakes.wake(tenant);
  }

  /** Up to `limit` events after `afterSeq`, oldest first, of `tenant` only when given (port/events.ts). */
  async eventsAfter(afterSeq: number, limit: number, tenant?: string): Promise<QuotaEvent[]> {
    return this.#conn.read(() => readEventsAfter(this.#conn, afterSeq, limit, tenant));
  }

  /** The newest `limit` events, oldest first, of `tenant` only when given (port/events.ts). */
  async newestEvents(limit: number, tenant?: string): Promise<QuotaEvent[]> {
    return this.#conn.read(() => readNewestEvents(this.#conn, limit, tenant));
  }

  /** The standing plane-wide halt (`quota_plane_halt`), or `null`; an unreadable one throws `STORE_CORRUPT`. */
  async getPlaneHalt(): Promise<Halt | null> {
    return this.#conn.read(() => readPlaneHalt(this.#conn));
  }

  /** Throws (or replaces) the plane-wide halt and appends `audit` to `auditTenant`'s chain, in one `BEGIN IMMEDIATE` transaction. */
  async setPlaneHalt(halt: Halt, audit: AuditEntry, auditTenant: string): Promise<void> {
    if (this.#conn.isClosed) throw closedStoreError();
    await this.#conn.write(() => {
      appendAuditInTransaction(this.#conn, auditTenant, audit);
      this.#conn.run(UPSERT_PLANE_HALT, {
        reason: halt.reason,
        actor: halt.by.actor,
        basis: halt.by.basis,
        atMs: halt.atMs,
        reachesRunning: halt.reachesRunning === true ? 1 : 0,
      });
      appendEventInTransaction(this.#conn, haltSetEvent(null, halt));
    });
  }

  /** Appends `audit`, then removes the plane-wide halt only if it is still `standing`, in one `BEGIN IMMEDIATE` transaction. */
  async liftPlaneHaltIf(standing: Halt, audit: AuditEntry, auditTenant: string): Promise<boolean> {
    if (this.#conn.isClosed) throw closedStoreError();
    return this.#conn.write(() => {
      appendAuditInTransaction(this.#conn, auditTenant, audit);
      const row = this.#conn.get<PlaneHaltRow>(SELECT_PLANE_HALT, {});
      if (row === undefined || !sameHalt(decodePlaneHaltRow(row), standing)) return false;
      if (this.#conn.run(DELETE_PLANE_HALT, {}) === 0) return false;
      appendEventInTransaction(this.#conn, haltLiftedEvent(null, standing, { atMs: audit.atMs, by: audit.by }));
      return true;
    });
  }

  /** Every tenant's slots, and each named agent's, from one read transaction. */
  async planeUsage(agents: readonly string[]): Promise<PlaneUsage> {
    return this.#conn.read(() => {
      const count = (sql: string, params: Readonly<Record<string, string | number | bigint | null>>): number =>
        Math.min(this.#conn.get<{ running: number }>(sql, params)?.running ?? 0, MAX_AMOUNT);
      const byAgent: Record<string, number> = {};
      for (const agent of agents) {
        Object.defineProperty(byAgent, agent, { value: count(COUNT_PLANE_AGENT_SLOTS, { agent }), enumerable: true, writable: true, configurable: true });
      }
      return { running: count(COUNT_PLANE_SLOTS, {}), agents: byAgent };
    });
  }

  /** Closes the connection; idempotent. Later calls throw `STORE_UNAVAILABLE`. */
  async close(): Promise<void> {
    await this.#conn.close();
  }
}

/**
 * Opens (creating if needed) and migrates a SQLite store at `path` (`:memory:` for a private
 * in-memory one). The file is put in WAL mode, so readers never block the one writer, with
 * `synchronous = FULL`: every acknowledged decision is on disk before the call returns (NORMAL
 * would survive a process crash but could lose the latest admissions and settlements to a power
 * cut, and the quota books must not forget a decision a caller already acted on). Decisions that
 * arrive together share one transaction and so one WAL sync (group commit; see
 * `SqliteConnection`).
 * Throws `INVALID_ARGUMENT` for bad options, `STORE_UNAVAILABLE` when the file cannot be opened or
 * stays locked past the busy timeout, `STORE_CORRUPT` for a file that is not a SQLite database,
 * and `SCHEMA_TOO_NEW` for a database migrated by a newer quotaplane.
 */
export async function openSqliteStore(path: string, options: SqliteStoreOptions = {}): Promise<SqliteQuotaStore> {
  if (typeof path !== 'string' || path.length === 0) {
    throw invalidArgument('path', `must be a file path or ':memory:', got ${describe(path)}`);
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0 || busyTimeoutMs > 2_147_483_647) {
    throw invalidArgument('busyTimeoutMs', `must be a whole number of milliseconds from 0 to 2147483647, got ${describe(busyTimeoutMs)}`);
  }
  const intent = { create: options.create ?? true, migrate: options.migrate ?? true };
  let db: Database.Database | undefined;
  try {
    db = openDatabase(path, busyTimeoutMs, intent.create);
    // Look before writing anything (WAL mode rewrites the header): a file that is refused stays as it was.
    const foundVersion = path === SQLITE_MEMORY_PATH ? null : inspectSqliteFile(db, path, intent, SQLITE_SCHEMA_VERSION);
    if (path !== SQLITE_MEMORY_PATH) {
      // Only takes effect on a file that has no page yet; it must precede WAL mode, which writes the header.
      db.pragma(`page_size = ${SQLITE_PAGE_SIZE_BYTES}`);
      enableWal(db, busyTimeoutMs);
    }
    db.pragma('synchronous = FULL');
    const migration =
      foundVersion === SQLITE_SCHEMA_VERSION
        ? { backend: 'sqlite', fromVersion: foundVersion, toVersion: foundVersion, applied: [] }
        : migrateSqlite(db, Date.now());
    // A file is in WAL mode (an in-memory database cannot be), so its checkpoints go to a background thread.
    const connection = new SqliteConnection(db, path === SQLITE_MEMORY_PATH ? { busyTimeoutMs } : { busyTimeoutMs, walDatabasePath: path });
    return new SqliteQuotaStore(connection, path, migration);
  } catch (error) {
    try {
      db?.close();
    } catch {
      // The open already failed; that error is the one to report.
    }
    throw sqliteOpenConfigurationError(error, path) ?? toQuotaError(error);
  }
}

function openDatabase(path: string, busyTimeoutMs: number, create: boolean): Database.Database {
  if (create || path === SQLITE_MEMORY_PATH) return new Database(path, { timeout: busyTimeoutMs });
  try {
    return new Database(path, { timeout: busyTimeoutMs, fileMustExist: true });
  } catch (error) {
    // better-sqlite3 answers a missing file with SQLITE_CANTOPEN and a missing directory with a
    // TypeError; both mean there is no store here, which the caller reports as such.
    if (existsSync(path)) throw error;
    throw noStoreAt(path, error);
  }
}

// Switching a fresh file to WAL needs a moment of exclusive access, and SQLite answers
// SQLITE_BUSY at once (without the busy handler) when another process is opening the same file.
// Retry within the busy timeout so several processes can open one new file together.
function enableWal(db: Database.Database, busyTimeoutMs: number): void {
  const deadline = Date.now() + busyTimeoutMs;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (typeof code !== 'string' || !code.startsWith('SQLITE_BUSY') || Date.now() >= deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}
