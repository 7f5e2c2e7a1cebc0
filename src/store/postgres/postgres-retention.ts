import {
  decodePrunedRow,
  prunedRunError,
  runPruneDetail,
  type PrunableRunsPage,
  type PrunableRunsRequest,
  type PrunedRate,
  type PrunedRow,
  type PrunedRuns,
  type PruneRateRequest,
  type PruneRunsRequest,
} from '../retention.js';
import { decodeRunId } from '../rows.js';
import type { RunStatus } from '../types.js';
import { appendAuditInTransaction } from './postgres-audit.js';
import type { PostgresConnection } from './postgres-connection.js';
import type { LifecycleContext } from './postgres-lifecycle.js';
import type { AuditAction } from '../../core/audit-actions.js';

/*
 * Retention on PostgreSQL (store.ts `prunableRuns`, `pruneRuns`, `pruneRate`; issue 9 fault 6).
 * Candidates are read with plain statements, a bounded page at a time. Each removal batch is one
 * TypeScript transaction that first takes the tenant's admission lock (the advisory lock every
 * batched decision of that tenant holds for its whole transaction, `quota_batch`), so no
 * admission, settle, resume, heartbeat or dispatch of the tenant interleaves with it; then it locks
 * the candidate run rows (`FOR UPDATE SKIP LOCKED`: a run an operator's settle or release holds
 * is left for the next prune, never waited on), re-checks them, and removes them. The lock is held
 * for one bounded batch only.
 */

/** The retention statements of the quoted schema `s` (part of `postgresQueries`). */
export function postgresRetentionQueries(s: string) {
  const prunable = `coalesce(r.status_since_ms, r.admitted_at_ms) <= $COND_CUT
    AND NOT EXISTS (SELECT 1 FROM ${s}.quota_running x WHERE x.tenant = r.tenant AND x.run_id = r.run_id)
    AND NOT EXISTS (SELECT 1 FROM ${s}.quota_reserved h WHERE h.tenant = r.tenant AND h.run_id = r.run_id)
    AND NOT EXISTS (SELECT 1 FROM ${s}.quota_passes p
          WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.settled_at_ms IS NULL)`;
  return {
    /** Seed 0, the key `quota_batch` locks each tenant of a batch under. */
    lockTenantDecisions: `SELECT pg_advisory_xact_lock(hashtextextended('quota-admission:' || octet_length($1::text) || ':' || $1::text, 0))`,
    scanRuns: `SELECT run_id FROM ${s}.quota_runs WHERE tenant = $1 AND run_id > $2 ORDER BY run_id LIMIT $3`,
    prunableInPage: `SELECT r.run_id, coalesce(r.status_since_ms, r.admitted_at_ms) AS closed_at_ms,
        (SELECT count(*) FROM ${s}.quota_passes p WHERE p.tenant = r.tenant AND p.run_id = r.run_id)::int AS passes,
        ((SELECT count(*) FROM ${s}.quota_settled x WHERE x.tenant = r.tenant AND x.run_id = r.run_id)
          + (SELECT count(*) FROM ${s}.quota_passes p
              WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.receipt_tokens IS NOT NULL))::int AS receipts
      FROM ${s}.quota_runs r
      WHERE r.tenant = $1 AND r.status = $2 AND r.run_id > $3 AND r.run_id <= $4 AND ${prunable.replace('$COND_CUT', '$5')}
      ORDER BY r.run_id`,
    /**
     * One batch's removal in one statement: lock the candidates that still qualify (skipping a run
     * row another transaction holds), delete their passes and receipts, write their tombstones,
     * delete their registry rows, and answer the run ids with the counts.
     */
    removeRuns: `WITH locked AS (
        SELECT r.run_id, r.status, r.last_epoch, coalesce(r.status_since_ms, r.admitted_at_ms) AS closed_at_ms
          FROM ${s}.quota_runs r
         WHERE r.tenant = $1 AND r.run_id = ANY ($2::text[]) AND r.status IN ('concluded', 'released')
           AND ${prunable.replace('$COND_CUT', '$3')}
         ORDER BY r.run_id FOR UPDATE OF r SKIP LOCKED),
      passes AS (DELETE FROM ${s}.quota_passes p USING locked l WHERE p.tenant = $1 AND p.run_id = l.run_id
        RETURNING p.receipt_tokens IS NOT NULL AS had_receipt),
      receipts AS (DELETE FROM ${s}.quota_settled x USING locked l WHERE x.tenant = $1 AND x.run_id = l.run_id RETURNING 1),
      tombstones AS (INSERT INTO ${s}.quota_pruned (tenant, run_id, status, last_epoch, closed_at_ms, pruned_at_ms)
        SELECT $1, l.run_id, l.status, l.last_epoch, l.closed_at_ms, $4 FROM locked l
        ON CONFLICT (tenant, run_id) DO NOTHING RETURNING 1),
      runs AS (DELETE FROM ${s}.quota_runs r USING locked l WHERE r.tenant = $1 AND r.run_id = l.run_id RETURNING r.run_id)
      SELECT coalesce((SELECT array_agg(run_id ORDER BY run_id) FROM runs), '{}') AS runs,
             (SELECT count(*) FROM passes)::int AS passes,
             ((SELECT count(*) FROM receipts) + (SELECT count(*) FROM passes WHERE had_receipt))::int AS receipts,
             (SELECT count(*) FROM tombstones)::int AS tombstones`,
    selectTombstone: `SELECT status, last_epoch, closed_at_ms, pruned_at_ms FROM ${s}.quota_pruned WHERE tenant = $1 AND run_id = $2`,
    listRateGrants: `SELECT grant_ref FROM ${s}.quota_rate_grants WHERE tenant = $1 ORDER BY grant_ref`,
    pruneGrantRows: `WITH doomed AS (
        SELECT ordinal FROM ${s}.quota_rate
         WHERE tenant = $1 AND grant_ref = $2 AND reserved_at_ms <= $3 ORDER BY reserved_at_ms LIMIT $4)
      DELETE FROM ${s}.quota_rate r USING doomed d WHERE r.tenant = $1 AND r.grant_ref = $2 AND r.ordinal = d.ordinal`,
    countRateRows: `SELECT count(*)::bigint AS n FROM ${s}.quota_rate WHERE tenant = $1 AND reserved_at_ms <= $2`,
  } as const;
}

/** The statements {@link postgresRetentionQueries} builds. */
export type RetentionQueries = ReturnType<typeof postgresRetentionQueries>;

/** store.ts `prunableRuns`. */
export async function listPrunableRuns(context: LifecycleContext, request: PrunableRunsRequest): Promise<PrunableRunsPage> {
  const { db, q, tenant } = context;
  const after = request.after ?? '';
  const scanned = await db.rows<{ run_id: string }>(q.retention.scanRuns, [tenant, after, request.scanLimit]);
  const last = scanned[scanned.length - 1]?.run_id;
  if (last === undefined) return { runs: [], next: null };
  const rows = await db.rows<{ run_id: string; closed_at_ms: string | number; passes: number; receipts: number }>(
    q.retention.prunableInPage,
    [tenant, request.status, after, last, request.closedAtOrBeforeMs],
  );
  return {
    runs: rows.map((row) => ({
      run: decodeRunId(tenant, 'run', row.run_id),
      status: request.status,
      closedAtMs: Number(row.closed_at_ms),
      passes: Number(row.passes),
      receipts: Number(row.receipts),
    })),
    next: scanned.length < request.scanLimit ? null : last,
  };
}

/** store.ts `pruneRuns`: one transaction under the tenant's admission lock. */
export async function pruneRuns(context: LifecycleContext, request: PruneRunsRequest): Promise<PrunedRuns> {
  const { db, q, tenant } = context;
  return db.transaction(async (tx) => {
    await tx.rows(q.retention.lockTenantDecisions, [tenant]);
    const [removed] = await tx.rows<{ runs: string[]; passes: number; receipts: number }>(q.retention.removeRuns, [
      tenant,
      request.runs,
      request.closedAtOrBeforeMs,
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
    await tx.rows(q.retention.lockTenantDecisions, [tenant]);
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
