import { decideRelease } from '../../core/lifecycle/release.js';
import { decideSweepRun } from '../../core/lifecycle/sweep.js';
import { grantWaiters } from '../../core/lifecycle/waiting.js';
import type {
  AppliedInstant,
  IdleHold,
  PassRecord,
  ReleaseRunOutcome,
  ReleaseRunRequest,
  RunListRequest,
  RunSummary,
  SweptRun,
} from '../types.js';
import { decodeRun, decodeRunId, decodeSpend, type RunRow } from '../rows.js';
import type { LifecycleContext } from './postgres-lifecycle-context.js';

/*
 * The sweep, the operator listings and the operator's release on PostgreSQL (store.ts),
 * with the SQLite adapter's semantics: listings are single statements (one snapshot each); the
 * sweep of one run and the audited release are decisions of core/lifecycle/ in a batch of the
 * store's batcher, under the tenant's lock. Mirrors sqlite-operator.ts.
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

/** store.ts `sweepRun`: core's `decideSweepRun`; a slot it gives back goes to the tenant's waiters. */
export function sweepRun(context: LifecycleContext, request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<SweptRun> {
  return context.batch.decide({
    tenant: context.tenant,
    name: 'sweep',
    atMs: request.atMs,
    applied: request.applied,
    run: request.run,
    decide: (books, atMs, queues) => {
      const swept = decideSweepRun(books, { run: request.run, atMs });
      grantWaiters(queues, context.tenant, atMs);
      return swept;
    },
  });
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
 * store.ts `releaseRun`: core's `decideRelease`, which gives the slot and the hold back and appends
 * the `run.release` audit row in one transaction; the slot goes to the tenant's waiters in it too.
 */
export function releaseRun(context: LifecycleContext, request: ReleaseRunRequest): Promise<ReleaseRunOutcome> {
  return context.batch.decide({
    tenant: context.tenant,
    name: 'release',
    atMs: request.atMs,
    run: request.run,
    decide: (books, atMs, queues) => {
      const outcome = decideRelease(books, { ...request, atMs });
      grantWaiters(queues, context.tenant, atMs);
      return outcome;
    },
  });
}
