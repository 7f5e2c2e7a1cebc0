import { decideRelease } from '../../core/lifecycle/release.js';
import { decideSweepRun } from '../../core/lifecycle/sweep.js';
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
  LIST_IDLE_HOLDS,
  LIST_LAPSED_RUNS,
  LIST_RUNS,
  LIST_RUNS_BY_STATUS,
  LIST_UNSETTLED_PASSES,
} from './sqlite-lease-queries.js';
import { SqliteTenantBooks } from './sqlite-tenant-books.js';
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

/** store.ts `sweepRun`: core's `decideSweepRun` on the tenant's books, inside the caller's `BEGIN IMMEDIATE` transaction. */
export function sweepRunInTransaction(conn: SqliteConnection, tenant: string, request: { run: string; atMs: number }): SweptRun {
  return decideSweepRun(new SqliteTenantBooks(conn, tenant), request);
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
