import {
  decodePrunedRow,
  prunableRows,
  prunedRunError,
  runPruneDetail,
  type PrunableRunsPage,
  type PrunableRunsRequest,
  type PrunedRate,
  type PrunedRow,
  type PrunedRuns,
  type PruneFactsRow,
  type PruneRateRequest,
  type PruneRunsRequest,
} from '../retention.js';
import { decodeRunId } from '../rows.js';
import type { RunStatus } from '../types.js';
import { appendAuditInTransaction } from './postgres-audit.js';
import type { PostgresConnection } from './postgres-connection.js';
import type { LifecycleContext } from './postgres-lifecycle-context.js';
import type { RetentionQueries } from './postgres-retention-queries.js';
import type { AuditAction } from '../../core/audit-actions.js';

/*
 * Retention on PostgreSQL (store.ts `prunableRuns`, `pruneRuns`, `pruneRate`).
 * Candidates are read with plain statements, a bounded page at a time. Each removal batch is one
 * TypeScript transaction that first takes the tenant's admission lock (the advisory lock every
 * batched decision of that tenant holds for its whole transaction, `quota_books_load`), so no
 * admission, settle, resume, heartbeat or dispatch of the tenant interleaves with it; then it locks
 * the candidate run rows (`FOR UPDATE SKIP LOCKED`: a run an operator's settle or release holds
 * is left for the next prune, never waited on) reading their facts, lets core judge them
 * (core/lifecycle/prunable.ts), and removes the runs core chose. The SQL decides nothing. The lock is held
 * for one bounded batch only.
 */

/** store.ts `prunableRuns`: the SQL reads a page's facts, core chooses (core/lifecycle/prunable.ts). */
export async function listPrunableRuns(context: LifecycleContext, request: PrunableRunsRequest): Promise<PrunableRunsPage> {
  const { db, q, tenant } = context;
  const after = request.after ?? '';
  const scanned = await db.rows<{ run_id: string }>(q.retention.scanRuns, [tenant, after, request.scanLimit]);
  const last = scanned[scanned.length - 1]?.run_id;
  if (last === undefined) return { runs: [], next: null };
  const facts = await db.rows<PruneFactsRow>(q.retention.factsInPage, [tenant, request.status, after, last]);
  const chosen = prunableRows(facts, request.closedAtOrBeforeMs);
  const counts = new Map(
    (chosen.length === 0
      ? []
      : await db.rows<{ run_id: string; passes: number; receipts: number }>(q.retention.countRecords, [
          tenant,
          chosen.map((row) => row.run_id),
        ])
    ).map((row) => [row.run_id, row]),
  );
  return {
    runs: chosen.map((row) => ({
      run: decodeRunId(tenant, 'run', row.run_id),
      status: request.status,
      closedAtMs: Number(row.closed_at_ms),
      passes: Number(counts.get(row.run_id)?.passes ?? 0),
      receipts: Number(counts.get(row.run_id)?.receipts ?? 0),
    })),
    next: scanned.length < request.scanLimit ? null : last,
  };
}

/**
 * store.ts `pruneRuns`: one transaction under the tenant's admission lock. It locks the requested
 * run rows and reads their facts, core chooses (core/lifecycle/prunable.ts), and one statement
 * removes exactly the runs it chose; the rows stay locked until the commit.
 */
export async function pruneRuns(context: LifecycleContext, request: PruneRunsRequest): Promise<PrunedRuns> {
  const { db, q, tenant } = context;
  return db.transaction(async (tx) => {
    await tx.rows(q.lockTenant, [tenant]);
    const facts = await tx.rows<PruneFactsRow>(q.retention.lockRunFacts, [tenant, request.runs]);
    const chosen = prunableRows(facts, request.closedAtOrBeforeMs).map((row) => row.run_id);
    if (chosen.length === 0) return { runs: [], passes: 0, receipts: 0, audit: null };
    const [removed] = await tx.rows<{ runs: string[]; passes: number; receipts: number }>(q.retention.removeRuns, [
      tenant,
      chosen,
      request.atMs,
    ]);
    const ids = removed?.runs ?? [];
    if (ids.length === 0) return { runs: [], passes: 0, receipts: 0, audit: null };
    const passes = Number(removed?.passes ?? 0);
    const receipts = Number(removed?.receipts ?? 0);
    const runs = ids.map((id) => decodeRunId(tenant, 'run', id));
    const audit = await appendAuditInTransaction(tx, q, tenant, {
      atMs: request.atMs,
      by: request.by,
      action: 'run.prune' satisfies AuditAction,
      subject: 'runs',
      detail: runPruneDetail(request, { runs, passes, receipts }),
    });
    return { runs, passes, receipts, audit };
  });
}

/** store.ts `pruneRate`: one transaction under the tenant's admission lock. */
export async function pruneRate(context: LifecycleContext, request: PruneRateRequest): Promise<PrunedRate> {
  const { db, q, tenant } = context;
  return db.transaction(async (tx) => {
    await tx.rows(q.lockTenant, [tenant]);
    let dispatches = 0;
    for (const { grant_ref: grant } of await tx.rows<{ grant_ref: string }>(q.retention.listRateGrants, [tenant])) {
      if (dispatches >= request.limit) break;
      dispatches += await tx.run(q.retention.pruneGrantRows, [tenant, grant, request.atOrBeforeMs, request.limit - dispatches]);
    }
    if (dispatches === 0) return { dispatches: 0, audit: null };
    const audit = await appendAuditInTransaction(tx, q, tenant, {
      atMs: request.atMs,
      by: request.by,
      action: 'rate.prune' satisfies AuditAction,
      subject: 'rate',
      detail: { atOrBeforeMs: request.atOrBeforeMs, dispatches },
    });
    return { dispatches, audit };
  });
}

/** store.ts `countPrunableRate`. */
export async function countPrunableRate(context: LifecycleContext, atOrBeforeMs: number): Promise<number> {
  const row = await context.db.row<{ n: string | number }>(context.q.retention.countRateRows, [context.tenant, atOrBeforeMs]);
  return Number(row?.n ?? 0);
}

/** The tombstone of `run`, or `null`. */
export async function readPruned(db: PostgresConnection, q: { retention: RetentionQueries }, tenant: string, run: string) {
  const row = await db.row<PrunedRow>(q.retention.selectTombstone, [tenant, run]);
  return row === undefined ? null : decodePrunedRow(run, row);
}

/**
 * Throws the pruned-run `CONFLICT` when `run` has a tombstone. Called after a decision answered the
 * run (or pass) as unknown, which wrote nothing: a tombstone read then says why it is unknown.
 */
export async function refuseIfPruned(context: LifecycleContext, run: string, verb: string): Promise<void> {
  const pruned = await readPruned(context.db, context.q, context.tenant, run);
  if (pruned !== null) throw prunedRunError(context.tenant, pruned, verb);
}

/** The status a pruned `run` closed with, or `null` when it has no tombstone. */
export async function prunedStatus(context: LifecycleContext, run: string): Promise<RunStatus | null> {
  return (await readPruned(context.db, context.q, context.tenant, run))?.status ?? null;
}
