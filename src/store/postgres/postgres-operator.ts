import { QuotaError } from '../../core/errors.js';
import { isClosedStatus } from '../../core/lifecycle/run-rules.js';
import type {
  AppliedInstant,
  Held,
  IdleHold,
  PassRecord,
  ReleaseRunOutcome,
  ReleaseRunRequest,
  RunListRequest,
  RunSummary,
  SweptRun,
} from '../types.js';
import { decodeRun, decodeRunId, decodeSpend, type RunRow } from '../rows.js';
import { appendAuditInTransaction } from './postgres-audit.js';
import { prunedStatus } from './postgres-retention.js';
import type { LifecycleContext } from './postgres-lifecycle-context.js';
import type { AuditAction } from '../../core/audit-actions.js';

/*
 * The sweep, the operator listings and the operator's release on PostgreSQL (store.ts),
 * with the SQLite adapter's semantics: listings are single statements (one snapshot each), the
 * sweep of one run is one server-side function under the run's row lock, and the audited release
 * is one TypeScript transaction (its audit hash is computed here).
 */

interface RunSummaryRow extends RunRow {
  readonly status_since_ms: number | null;
  readonly holds_slot: boolean;
  readonly lease_expires_at_ms: number | null;
}

/** store.ts `runs`: one page of the registry, optionally of some statuses. */
export async function listRuns(context: LifecycleContext, request: RunListRequest): Promise<RunSummary[]> {
  const { db, q, tenant } = context;
  const rows = await db.rows<RunSummaryRow>(q.listRuns, [tenant, request.after ?? '', request.limit, request.statuses ?? null]);
  return rows.map((row) => {
    const record = decodeRun(tenant, row);
    return {
      ...record,
      statusSinceMs: row.status_since_ms ?? record.admittedAtMs,
      holdsSlot: row.holds_slot,
      leaseExpiresAtMs: row.lease_expires_at_ms ?? record.admittedAtMs,
    };
  });
}

/** store.ts `lapsedRuns`: the runs a sweep at `atMs` would act on. */
export async function listLapsedRuns(
  context: LifecycleContext,
  request: { atMs: number; after?: string | undefined; limit: number },
): Promise<string[]> {
  const { db, q, tenant } = context;
  const rows = await db.rows<{ run_id: string }>(q.listLapsedRuns, [tenant, request.atMs, request.after ?? '', request.limit]);
  return rows.map((row) => decodeRunId(tenant, 'run', row.run_id));
}

/** store.ts `sweepRun`: see `quota_sweep_run`. */
export async function sweepRun(context: LifecycleContext, request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<SweptRun> {
  const { batch, tenant } = context;
  const values = (atMs: number) => [tenant, request.run, atMs];
  const row = await batch.decide<{ released_slot: boolean; stranded: boolean } | undefined>(
    'sweepRun',
    request.applied === undefined ? values(request.atMs) : { askedAtMs: request.atMs, applied: request.applied, values, at: 2 },
  );
  return { run: request.run, releasedSlot: row?.released_slot === true, stranded: row?.stranded === true };
}

/** store.ts `unsettledPasses`. */
export async function listUnsettledPasses(context: LifecycleContext, request: { atMs: number; limit: number }): Promise<PassRecord[]> {
  const { db, q, tenant } = context;
  const rows = await db.rows<{
    run_id: string;
    epoch: number;
    period: string;
    takes_slot: boolean;
    started_at_ms: number;
    lease_expires_at_ms: number;
  }>(q.listUnsettledPasses, [tenant, request.atMs, request.limit]);
  return rows.map((row) => ({
    run: decodeRunId(tenant, 'pass', row.run_id),
    epoch: row.epoch,
    period: row.period,
    takesSlot: row.takes_slot,
    startedAtMs: row.started_at_ms,
    leaseExpiresAtMs: row.lease_expires_at_ms,
    settledAtMs: null,
  }));
}

/** store.ts `idleHolds`. */
export async function listIdleHolds(context: LifecycleContext, request: { idleSinceMs: number; limit: number }): Promise<IdleHold[]> {
  const { db, q, tenant } = context;
  const rows = await db.rows<{ run_id: string; period: string; tokens: number; minor_units: number; status_since_ms: number }>(
    q.listIdleHolds,
    [tenant, request.idleSinceMs, request.limit],
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
 * names a release that did not happen, nor misses one that did. The run row is locked first, as
 * every lifecycle function locks it, so a settle or resume of the run waits for the release.
 */
export async function releaseRun(context: LifecycleContext, request: ReleaseRunRequest): Promise<ReleaseRunOutcome> {
  const { db, q, tenant } = context;
  const key = [tenant, request.run];
  return db.transaction(async (tx) => {
    // The tenant's admission lock before the run's row lock, the order of every batched decision:
    // the slot given back goes to the tenant's waiters in this transaction.
    await tx.rows(q.waiters.lockTenant, [tenant]);
    const [row] = await tx.rows<RunRow>(q.lockRun, key);
    const previousStatus = row === undefined ? null : decodeRun(tenant, row).status;
    const [slot] = await tx.rows<{ held: boolean }>(q.slotExists, key);
    const slotHeld = slot?.held === true;
    const [holdRow] = await tx.rows<{ period: string; tokens: number; minor_units: number }>(q.selectHold, key);
    const hold: Held | null =
      holdRow === undefined
        ? null
        : {
            run: request.run,
            period: holdRow.period,
            remaining: decodeSpend(tenant, `the hold of run '${request.run}'`, holdRow.tokens, holdRow.minor_units),
          };
    if (!slotHeld && hold === null) {
      if (previousStatus !== null && isClosedStatus(previousStatus)) {
        return { outcome: 'already-closed', run: request.run, previousStatus, slotReleased: false, holdReleased: null, audit: null };
      }
      const pruned = previousStatus === null ? await prunedStatus(context, request.run) : null;
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
    // Hold before slot, the order every settle takes them in, so the two never deadlock.
    await tx.run(q.deleteHold, key);
    await tx.run(q.deleteSlot, key);
    if (row !== undefined) await tx.run(q.markRunReleased, [...key, request.atMs]);
    const audit = await appendAuditInTransaction(tx, q, tenant, {
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
    await tx.rows(q.waiters.grantWaiters, [tenant, request.atMs]);
    return { outcome: 'released', run: request.run, previousStatus, slotReleased: slotHeld, holdReleased: hold, audit };
  });
}
