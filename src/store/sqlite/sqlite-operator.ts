import { decideRelease } from '../../core/lifecycle/release.js';
import type {
  IdleHold,
  PassRecord,
  ReleaseRunOutcome,
  ReleaseRunRequest,
  RunListRequest,
  RunSummary,
  SweptRun,
} from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import {
  HAS_LIVE_PASS,
  LIST_IDLE_HOLDS,
  LIST_LAPSED_RUNS,
  LIST_RUNS,
  LIST_RUNS_BY_STATUS,
  LIST_UNSETTLED_PASSES,
  MARK_RUN_STRANDED,
} from './sqlite-lease-queries.js';
import { DELETE_SLOT, SELECT_RUN } from './sqlite-queries.js';
import { SqliteTenantBooks } from './sqlite-tenant-books.js';
import { requeueLapsedGrant } from './sqlite-waiters.js';

const SELECT_SLOT_OF = 'SELECT 1 AS held FROM quota_running WHERE tenant = @tenant AND run_id = @run';
import { decodeRun, decodeRunId, decodeSpend, type RunRow } from '../rows.js';

/*
 * The sweep, the operator listings and the operator's release (store.ts), each body run
 * inside the one transaction the tenant handle opens: `BEGIN IMMEDIATE` for the writes, a read
 * transaction for the listings.
 */

interface RunSummaryRow extends RunRow {
  readonly status_since_ms: number | null;
  readonly holds_slot: number;
  readonly lease_expires_at_ms: number | null;
}

function decodeRunSummary(tenant: string, row: RunSummaryRow): RunSummary {
  const record = decodeRun(tenant, row);
  return {
    ...record,
    statusSinceMs: row.status_since_ms ?? record.admittedAtMs,
    holdsSlot: row.holds_slot === 1,
    leaseExpiresAtMs: row.lease_expires_at_ms ?? record.admittedAtMs,
  };
}

/** store.ts `runs`: one page of the registry, optionally of some statuses. */
export function listRuns(conn: SqliteConnection, tenant: string, request: RunListRequest): RunSummary[] {
  const after = request.after ?? '';
  const rows =
    request.statuses === undefined
      ? conn.all<RunSummaryRow>(LIST_RUNS, { tenant, after, limit: request.limit })
      : conn.all<RunSummaryRow>(LIST_RUNS_BY_STATUS, {
          tenant,
          after,
          limit: request.limit,
          statuses: JSON.stringify(request.statuses),
        });
  return rows.map((row) => decodeRunSummary(tenant, row));
}

/** store.ts `lapsedRuns`: the runs a sweep at `atMs` would act on. */
export function listLapsedRuns(conn: SqliteConnection, tenant: string, request: { atMs: number; after?: string | undefined; limit: number }): string[] {
  const rows = conn.all<{ run_id: string }>(LIST_LAPSED_RUNS, {
    tenant,
    atMs: request.atMs,
    after: request.after ?? '',
    limit: request.limit,
  });
  return rows.map((row) => decodeRunId(tenant, 'run', row.run_id));
}

/**
 * store.ts `sweepRun`: re-checks, inside this transaction, that the run is
 * registered and has no live pass, so a heartbeat that won the race keeps its slot; then gives the
 * slot back and strands a running run. The hold stays: what the dead pass spent is unknown.
 */
export function sweepRunInTransaction(conn: SqliteConnection, tenant: string, request: { run: string; atMs: number }): SweptRun {
  const untouched: SweptRun = { run: request.run, releasedSlot: false, stranded: false };
  const key = { tenant, run: request.run };
  if (conn.get<RunRow>(SELECT_RUN, key) === undefined) return untouched;
  if (conn.get<{ live: number }>(HAS_LIVE_PASS, { ...key, atMs: request.atMs })?.live === 1) return untouched;
  // A waiter's grant that lapsed uncollected: withdrawn whole and the waiter re-queued in its place.
  const holding = conn.get(SELECT_SLOT_OF, key) !== undefined;
  if (requeueLapsedGrant(conn, tenant, request.run, request.atMs, 0)) return { run: request.run, releasedSlot: holding, stranded: false };
  const releasedSlot = conn.run(DELETE_SLOT, key) > 0;
  const stranded = conn.run(MARK_RUN_STRANDED, key) > 0;
  return { run: request.run, releasedSlot, stranded };
}

/** store.ts `unsettledPasses`. */
export function listUnsettledPasses(conn: SqliteConnection, tenant: string, request: { atMs: number; limit: number }): PassRecord[] {
  const rows = conn.all<{
    run_id: string;
    epoch: number;
    period: string;
    takes_slot: number;
    started_at_ms: number;
    lease_expires_at_ms: number;
  }>(LIST_UNSETTLED_PASSES, { tenant, atMs: request.atMs, limit: request.limit });
  return rows.map((row) => ({
    run: decodeRunId(tenant, 'pass', row.run_id),
    epoch: row.epoch,
    period: row.period,
    takesSlot: row.takes_slot === 1,
    startedAtMs: row.started_at_ms,
    leaseExpiresAtMs: row.lease_expires_at_ms,
    settledAtMs: null,
  }));
}

/** store.ts `idleHolds`. */
export function listIdleHolds(conn: SqliteConnection, tenant: string, request: { idleSinceMs: number; limit: number }): IdleHold[] {
  const rows = conn.all<{ run_id: string; period: string; tokens: number; minor_units: number; status_since_ms: number }>(
    LIST_IDLE_HOLDS,
    { tenant, idleSinceMs: request.idleSinceMs, limit: request.limit },
  );
  return rows.map((row) => ({
    run: decodeRunId(tenant, 'hold', row.run_id),
    period: row.period,
    remaining: decodeSpend(tenant, 'the hold table', row.tokens, row.minor_units),
    idleSinceMs: row.status_since_ms,
  }));
}

/** store.ts `releaseRun`: core's `decideRelease` on the tenant's books, inside the caller's `BEGIN IMMEDIATE` transaction. */
export function releaseRunInTransaction(conn: SqliteConnection, tenant: string, request: ReleaseRunRequest): ReleaseRunOutcome {
  return decideRelease(new SqliteTenantBooks(conn, tenant), request);
}
