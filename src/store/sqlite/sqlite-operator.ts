import { QuotaError } from '../../core/errors.js';
import type {
  AuditRecord,
  Held,
  IdleHold,
  PassRecord,
  ReleaseRunOutcome,
  ReleaseRunRequest,
  RunListRequest,
  RunSummary,
  SweptRun,
} from '../types.js';
import { isClosedStatus } from '../../core/lifecycle/run-rules.js';
import { appendAuditInTransaction } from './sqlite-audit.js';
import { prunedStatus } from './sqlite-retention.js';
import type { SqliteConnection } from './sqlite-connection.js';
import {
  HAS_LIVE_PASS,
  LIST_IDLE_HOLDS,
  LIST_LAPSED_RUNS,
  LIST_RUNS,
  LIST_RUNS_BY_STATUS,
  LIST_UNSETTLED_PASSES,
  MARK_RUN_RELEASED,
  MARK_RUN_STRANDED,
  SLOT_EXISTS,
} from './sqlite-lease-queries.js';
import { DELETE_HOLD, DELETE_SLOT, SELECT_HOLD, SELECT_RUN } from './sqlite-queries.js';
import { requeueLapsedGrant } from './sqlite-waiters.js';

const SELECT_SLOT_OF = 'SELECT 1 AS held FROM quota_running WHERE tenant = @tenant AND run_id = @run';
import { decodeRun, decodeRunId, decodeSpend, type RunRow } from '../rows.js';
import type { AuditAction } from '../../core/audit-actions.js';

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

/**
 * store.ts `releaseRun`: the slot, the hold and the audit row in one transaction, so the log never
 * names a release that did not happen, nor misses one that did.
 */
export function releaseRunInTransaction(conn: SqliteConnection, tenant: string, request: ReleaseRunRequest): ReleaseRunOutcome {
  const key = { tenant, run: request.run };
  const row = conn.get<RunRow>(SELECT_RUN, key);
  const previousStatus = row === undefined ? null : decodeRun(tenant, row).status;
  const slotHeld = conn.get<{ held: number }>(SLOT_EXISTS, key)?.held === 1;
  const holdRow = conn.get<{ period: string; tokens: number; minor_units: number }>(SELECT_HOLD, key);
  const hold: Held | null =
    holdRow === undefined
      ? null
      : { run: request.run, period: holdRow.period, remaining: decodeSpend(tenant, `the hold of run '${request.run}'`, holdRow.tokens, holdRow.minor_units) };
  if (!slotHeld && hold === null) {
    if (previousStatus !== null && isClosedStatus(previousStatus)) {
      return { outcome: 'already-closed', run: request.run, previousStatus, slotReleased: false, holdReleased: null, audit: null };
    }
    const pruned = previousStatus === null ? prunedStatus(conn, tenant, request.run) : null;
    if (pruned !== null) {
      // A pruned run was closed before it was pruned: nothing to release.
      return { outcome: 'already-closed', run: request.run, previousStatus: pruned, slotReleased: false, holdReleased: null, audit: null };
    }
    if (previousStatus === null) {
      throw new QuotaError('NOT_FOUND', `tenant '${tenant}' has no run '${request.run}' and nothing held under that id to release`, {
        details: { tenant, run: request.run },
      });
    }
  }
  conn.run(DELETE_SLOT, key);
  conn.run(DELETE_HOLD, key);
  if (row !== undefined) conn.run(MARK_RUN_RELEASED, { ...key, atMs: request.atMs });
  const audit: AuditRecord = appendAuditInTransaction(conn, tenant, {
    atMs: request.atMs,
    by: request.by,
    action: 'run.release' satisfies AuditAction,
    subject: request.run,
    detail: {
      previousStatus,
      slot: slotHeld,
      hold: hold === null ? null : { period: hold.period, tokens: hold.remaining.tokens, minorUnits: hold.remaining.minorUnits },
    },
  });
  return { outcome: 'released', run: request.run, previousStatus, slotReleased: slotHeld, holdReleased: hold, audit };
}
