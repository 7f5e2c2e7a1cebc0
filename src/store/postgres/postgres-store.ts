import { invalidArgument } from '../../core/errors.js';
import type { ApiKeyStore } from '../api-keys.js';
import type { MigrationReport } from '../migrations.js';
import { PostgresApiKeyStore } from './postgres-api-keys.js';
import { PostgresWebhookStore } from './postgres-webhooks.js';
import { PostgresCallMeterStore } from './postgres-model-calls.js';
import type { CallMeterStore } from '../port/model-calls.js';
import type { WebhookStore } from '../port/webhooks.js';
import type { QuotaStore, TenantStore } from '../store.js';
import { MAX_AMOUNT } from '../../core/amounts.js';
import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import { decodePlaneCeiling } from '../plane-rows.js';
import type { Halt } from '../../core/halt-scope.js';
import { decodePlaneHaltRow, type PlaneHaltRow } from '../halt-rows.js';
import { knownTenantOf } from '../known-tenants.js';
import type { AuditEntry, PlaneUsage } from '../types.js';
import { appendAuditInTransaction } from './postgres-audit.js';
import type { QuotaEvent } from '../../core/events.js';
import { appendEventsInTransaction, readEventsAfter, readNewestEvents } from './postgres-events.js';
import { haltLiftedEvent, haltSetEvent } from '../../core/run-events.js';
import { decideNow, defaultBatchSettings, MAX_BATCH, PLANE_WIDE, PostgresBatcher, type BatchSettings } from './postgres-batcher.js';
import { PostgresConnection } from './postgres-connection.js';
import { closedStoreError, toQuotaError } from './postgres-errors.js';
import { migratePostgres, POSTGRES_SCHEMA_VERSION } from './postgres-migrations.js';
import { inspectPostgresSchema, postgresOpenConfigurationError, withoutSecrets } from './postgres-open-check.js';
import { createPool } from './postgres-pool.js';
import { postgresQueries, type PostgresQueries } from './postgres-queries.js';
import { DEFAULT_POSTGRES_SCHEMA, quoteSchemaName } from './postgres-schema-name.js';
import { PostgresTenantStore } from './postgres-tenant-store.js';
import { grantEveryQueue } from '../../core/lifecycle/waiting.js';
import { PostgresWaiterWakes } from './postgres-wakes.js';

/**
 * Options of {@link openPostgresStore}; every one is optional.
 * - `schema`: the schema holding quotaplane's tables and functions, default `quotaplane`
 *   (lowercase letters, digits, `_`; created on first open).
 * - `busyTimeoutMs`: how long one call may wait for a pooled connection or a row/advisory lock
 *   before it fails with `STORE_UNAVAILABLE`; default 5 000.
 * - `poolSize`: connections per store, default 4. Admissions are short transactions, and each
 *   instance of quotaplane has its own pool, so `instances × poolSize` must fit the server's
 *   `max_connections`.
 * - `statementTimeoutMs`: server-side cap on one statement, default 10 000; the client also
 *   gives up 2 s after that when a server stops answering without closing the connection.
 * - `maxBatch`: most decisions one batch carries (one transaction: the tenants' locks and rows
 *   loaded in one statement, the changed rows written in one), default 32, at most 64.
 * - `batchLanes`: most batches in flight at once, each on its own pooled connection; default half
 *   the pool (at least 1), leaving connections for reads and operator transactions.
 * - `onPoolError`: called with an error of an idle pooled connection (the server restarted, a
 *   network blip); default ignores it, since the next call simply opens a new connection.
 */
export interface PostgresStoreOptions {
  readonly schema?: string | undefined;
  readonly busyTimeoutMs?: number | undefined;
  readonly poolSize?: number | undefined;
  readonly statementTimeoutMs?: number | undefined;
  readonly maxBatch?: number | undefined;
  readonly batchLanes?: number | undefined;
  readonly onPoolError?: ((error: Error) => void) | undefined;
  /** Create the schema and tables when there is no store (default true); see `OpenStoreOptions.create`. */
  readonly create?: boolean | undefined;
  /** Migrate a store an older quotaplane wrote (default true); see `OpenStoreOptions.migrate`. */
  readonly migrate?: boolean | undefined;
}

/**
 * A {@link QuotaStore} on PostgreSQL: exact across every instance that shares the database.
 * Tenant handles share one pool.
 */
export class PostgresQuotaStore implements QuotaStore {
  readonly backend = 'postgres';
  /** What opening this store did to the schema. */
  readonly migration: MigrationReport;
  /** The schema the store works in. */
  readonly schema: string;
  readonly #db: PostgresConnection;
  readonly #q: PostgresQueries;
  readonly #apiKeys: PostgresApiKeyStore;
  readonly #webhooks: PostgresWebhookStore;
  readonly #callMeters: PostgresCallMeterStore;
  readonly #batch: PostgresBatcher;
  readonly #wakes: PostgresWaiterWakes;

  /** Use {@link openPostgresStore}; `s` is `schema` quoted; `url` opens the `LISTEN` connection of waiting admissions. */
  constructor(
    db: PostgresConnection,
    queries: PostgresQueries,
    schema: string,
    s: string,
    migration: MigrationReport,
    batch: BatchSettings,
    url: string,
  ) {
    this.#db = db;
    this.#q = queries;
    this.#batch = new PostgresBatcher(db, queries.books, batch);
    this.schema = schema;
    this.migration = migration;
    this.#apiKeys = new PostgresApiKeyStore(db, s, schema);
    this.#webhooks = new PostgresWebhookStore(db, s);
    this.#callMeters = new PostgresCallMeterStore(db, queries.calls);
    this.#wakes = new PostgresWaiterWakes(url, s);
  }

  tenant(tenant: string): TenantStore {
    return new PostgresTenantStore(this.#db, this.#q, this.#batch, tenant);
  }

  /** The known tenants in byte order (rules.md#l95): every tenant with a record of any kind of `TENANT_RECORDS`. */
  async tenants(): Promise<string[]> {
    const rows = await this.#db.rows<{ tenant: string }>(this.#q.listTenants, []);
    return rows.map((row) => row.tenant);
  }

  /** Every tenant with an audit chain, a deleted one included, in byte order (store.ts `auditChains`). */
  async auditChains(): Promise<string[]> {
    const rows = await this.#db.rows<{ tenant: string }>(this.#q.listAuditChains, []);
    return rows.map((row) => row.tenant);
  }

  /** Whether `tenant` is known (rules.md#l95): one indexed EXISTS per kind of record, decided by `isKnownTenant`. */
  async hasTenant(tenant: string): Promise<boolean> {
    return knownTenantOf(await this.#db.row<Record<string, unknown>>(this.#q.tenantRecords, [tenant]));
  }

  /** The API keys (table `quotaplane_api_keys`), on this store's pool. Throws `STORE_UNAVAILABLE` once closed. */
  apiKeys(): ApiKeyStore {
    if (this.#db.isClosed) throw closedStoreError();
    return this.#apiKeys;
  }

  /** The webhook endpoints and deliveries, on this store's pool. Throws `STORE_UNAVAILABLE` once closed. */
  webhooks(): WebhookStore {
    if (this.#db.isClosed) throw closedStoreError();
    return this.#webhooks;
  }

  /** The model-call books (docs/design/rules.md#m1), on this store's pool. Throws `STORE_UNAVAILABLE` once closed. */
  callMeters(): CallMeterStore {
    if (this.#db.isClosed) throw closedStoreError();
    return this.#callMeters;
  }

  /**
   * Wakes waiting admissions by `LISTEN/NOTIFY` on one dedicated connection, opened on
   * the first wait, re-established when lost, with polling as the fallback meanwhile.
   */
  waiterWakes(): PostgresWaiterWakes {
    return this.#wakes;
  }

  /** The stored plane-wide ceiling (`quota_plane`), or `null`; an unreadable one throws `STORE_CORRUPT`. */
  async getPlaneCeiling(): Promise<PlaneCeiling | null> {
    const row = await this.#db.row<{ ceiling_json: unknown }>(this.#q.selectPlane, []);
    return row === undefined ? null : decodePlaneCeiling(row.ceiling_json);
  }

  /** Replaces the plane-wide ceiling and appends `audit` to `auditTenant`'s chain, in one transaction. */
  async setPlaneCeiling(plane: PlaneCeiling, audit: AuditEntry, auditTenant: string): Promise<void> {
    await this.#db.transaction(async (tx) => {
      await tx.rows(this.#q.lockPlaneCeiling, []);
      await tx.run(this.#q.upsertPlane, [JSON.stringify(plane)]);
      await appendAuditInTransaction(tx, this.#q, auditTenant, audit);
      // A raised plane-wide ceiling admits waiters, in turn, in this transaction; every tenant's
      // lock is only tried (see PostgresQueueBooks).
      await decideNow(tx, this.#q.books, {
        tenant: PLANE_WIDE,
        name: 'plane ceiling change',
        atMs: audit.atMs,
        decide: (_books, atMs, queues) => grantEveryQueue(queues, atMs),
      });
    });
  }

  /** The standing plane-wide halt (`quota_plane_halt`), or `null`; an unreadable one throws `STORE_CORRUPT`. */
  /** Up to `limit` events after `afterSeq`, oldest first, of `tenant` only when given (port/events.ts). */
  async eventsAfter(afterSeq: number, limit: number, tenant?: string): Promise<QuotaEvent[]> {
    return readEventsAfter(this.#db, this.#q, afterSeq, limit, tenant);
  }

  /** The newest `limit` events, oldest first, of `tenant` only when given (port/events.ts). */
  async newestEvents(limit: number, tenant?: string): Promise<QuotaEvent[]> {
    return readNewestEvents(this.#db, this.#q, limit, tenant);
  }

  async getPlaneHalt(): Promise<Halt | null> {
    const row = await this.#db.row<PlaneHaltRow>(this.#q.selectPlaneHalt, []);
    return row === undefined ? null : decodePlaneHaltRow(row);
  }

  /**
   * Throws (or replaces) the plane-wide halt and appends `audit` to `auditTenant`'s chain, in one
   * transaction that first takes the plane ceiling's lock exclusively (docs/design/rules.md#c52):
   * it waits for every batch deciding under the halt as it stood, and every batch after reads the
   * new one; a batch deciding on kept rows finds the lock taken or the halt changed, and is
   * decided again under the locks.
   */
  async setPlaneHalt(halt: Halt, audit: AuditEntry, auditTenant: string): Promise<void> {
    await this.#db.transaction(async (tx) => {
      await tx.rows(this.#q.lockPlaneCeiling, []);
      await appendAuditInTransaction(tx, this.#q, auditTenant, audit);
      await tx.run(this.#q.upsertPlaneHalt, [halt.reason, halt.by.actor, halt.by.basis, halt.atMs, halt.reachesRunning === true]);
      await appendEventsInTransaction(tx, this.#q, [haltSetEvent(null, halt)]);
    });
  }

  /** Appends `audit`, then removes the plane-wide halt only if it is still `standing`, in one transaction under the plane ceiling's lock. */
  async liftPlaneHaltIf(standing: Halt, audit: AuditEntry, auditTenant: string): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      await tx.rows(this.#q.lockPlaneCeiling, []);
      await appendAuditInTransaction(tx, this.#q, auditTenant, audit);
      const removed = await tx.run(this.#q.deletePlaneHaltIfSame, [
        standing.reason,
        standing.by.actor,
        standing.by.basis,
        standing.atMs,
        standing.reachesRunning === true,
      ]);
      if (removed === 0) return false;
      await appendEventsInTransaction(tx, this.#q, [haltLiftedEvent(null, standing, { atMs: audit.atMs, by: audit.by })]);
      return true;
    });
  }

  /** Every tenant's slots, and each named agent's, from one statement (sums of the per-tenant counters). */
  async planeUsage(agents: readonly string[]): Promise<PlaneUsage> {
    const row = await this.#db.row<{ running: number; agents: Record<string, number | string> }>(this.#q.planeUsage, [agents]);
    const byAgent: Record<string, number> = {};
    for (const agent of agents) {
      const value = row?.agents?.[agent] ?? 0;
      Object.defineProperty(byAgent, agent, { value: Math.min(Number(value), MAX_AMOUNT), enumerable: true, writable: true, configurable: true });
    }
    return { running: Number(row?.running ?? 0), agents: byAgent };
  }

  async close(): Promise<void> {
    await this.#wakes.close();
    await this.#db.close();
  }
}

/**
 * Takes a `schema=<name>` query parameter out of a connection URL (so `--store` can name the
 * schema), leaving every other parameter byte for byte for `pg` (`sslmode`, `application_name`, …).
 */
function takeSchemaParameter(url: string): { url: string; schema?: string } {
  const query = url.indexOf('?');
  if (query < 0) return { url };
  let schema: string | undefined;
  const kept: string[] = [];
  for (const parameter of url.slice(query + 1).split('&')) {
    const equals = parameter.indexOf('=');
    const key = equals < 0 ? parameter : parameter.slice(0, equals);
    if (key === 'schema') schema = decodeURIComponent(equals < 0 ? '' : parameter.slice(equals + 1));
    else kept.push(parameter);
  }
  return schema === undefined ? { url } : { url: kept.length === 0 ? url.slice(0, query) : `${url.slice(0, query)}?${kept.join('&')}`, schema };
}

function positiveInteger(field: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw invalidArgument(field, `must be a positive integer, got ${String(value)}`);
  return value;
}

/**
 * Opens a PostgreSQL store at `url` (`postgres://` or `postgresql://`, any form `pg` accepts,
 * including `?sslmode=…`; a `?schema=<name>` parameter names the schema when `options.schema` does
 * not, and naming two different ones is `INVALID_ARGUMENT`): creates a pool, brings the schema to
 * this build's version (creating it on first use; concurrent openers wait for one another), and
 * answers the store. Throws `INVALID_ARGUMENT` for a bad option, `SCHEMA_TOO_NEW` when a newer
 * quotaplane migrated the schema (nothing is changed), `STORE_MISCONFIGURED` when the store cannot
 * be used as configured (a refused password, no such database, no store where `create: false`
 * expects one, another application's schema, a store that needs migrating with `migrate: false`),
 * and `STORE_UNAVAILABLE` when the server cannot be reached; the pool is closed again on any
 * failure. No message holds the URL's password.
 */
export async function openPostgresStore(givenUrl: string, options: PostgresStoreOptions = {}): Promise<PostgresQuotaStore> {
  if (typeof givenUrl !== 'string' || !/^postgres(ql)?:\/\//.test(givenUrl)) {
    throw invalidArgument('url', 'must be a postgres:// or postgresql:// connection URL');
  }
  const { url, schema: urlSchema } = takeSchemaParameter(givenUrl);
  if (options.schema !== undefined && urlSchema !== undefined && options.schema !== urlSchema) {
    throw invalidArgument('schema', `is ${JSON.stringify(options.schema)} but the URL names ${JSON.stringify(urlSchema)}; name it once`);
  }
  const schema = options.schema ?? urlSchema ?? DEFAULT_POSTGRES_SCHEMA;
  const s = quoteSchemaName(schema);
  const busyTimeoutMs = positiveInteger('busyTimeoutMs', options.busyTimeoutMs, 5_000);
  const poolSize = positiveInteger('poolSize', options.poolSize, 4);
  const batch = {
    maxBatch: positiveInteger('maxBatch', options.maxBatch, defaultBatchSettings(poolSize).maxBatch),
    lanes: positiveInteger('batchLanes', options.batchLanes, defaultBatchSettings(poolSize).lanes),
  };
  if (batch.maxBatch > MAX_BATCH) throw invalidArgument('maxBatch', `must be at most ${MAX_BATCH} (PostgreSQL's subtransaction cache), got ${batch.maxBatch}`);
  const statementTimeoutMs = positiveInteger('statementTimeoutMs', options.statementTimeoutMs, 10_000);
  const onPoolError = options.onPoolError ?? (() => {});
  const intent = { create: options.create ?? true, migrate: options.migrate ?? true };
  const pool = createPool({ url, poolSize, busyTimeoutMs, statementTimeoutMs }, onPoolError);
  try {
    // Look before creating anything: a schema of another application, or no store for a caller
    // that only reads, is refused without a change.
    const found = await inspectPostgresSchema(pool, givenUrl, schema, s, intent, POSTGRES_SCHEMA_VERSION);
    const migration =
      found === POSTGRES_SCHEMA_VERSION
        ? { backend: 'postgres', fromVersion: found, toVersion: found, applied: [] }
        : await migratePostgres(pool, schema, s, Date.now());
    return new PostgresQuotaStore(new PostgresConnection(pool, schema), postgresQueries(s), schema, s, migration, batch, url);
  } catch (error) {
    await pool.end().catch(() => undefined);
    throw withoutSecrets(postgresOpenConfigurationError(error, givenUrl) ?? toQuotaError(error), givenUrl);
  }
}
