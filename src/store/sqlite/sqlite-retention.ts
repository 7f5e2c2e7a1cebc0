import {
  decodePrunedRow,
  type PrunedRunRecord,
  runPruneDetail,
  prunableRows,
  type PrunableRun,
  type PrunableRunsPage,
  type PrunableRunsRequest,
  type PruneFactsRow,
  type PrunedRate,
  type PrunedRow,
  type PrunedRuns,
  type PruneRateRequest,
  type PruneRunsRequest,
} from '../retention.js';
import { decodeRunId } from '../rows.js';
import type { RunStatus } from '../types.js';
import { appendAuditInTransaction } from './sqlite-audit.js';
import type { SqliteConnection } from './sqlite-connection.js';
import {
  COUNT_RATE_ROWS,
  COUNT_RECORDS,
  DELETE_PASSES,
  DELETE_RECEIPTS,
  DELETE_RUN,
  FACTS_IN_PAGE,
  INSERT_TOMBSTONE,
  LIST_RATE_GRANTS,
  PRUNE_GRANT_ROWS,
  RUN_FACTS_OF,
  SCAN_RUNS,
  SELECT_TOMBSTONE,
} from './sqlite-retention-queries.js';
import type { AuditAction } from '../../core/audit-actions.js';

/*
 * Retention on SQLite (store.ts `prunableRuns`, `pruneRuns`, `pruneRate`). The
 * candidates are found in a read transaction (WAL readers never wait for the writer), a bounded
 * page at a time; each batch of removals is one decision on the group-commit writer that reads
 * every run's facts again under the write lock and lets core judge them (core/lifecycle/
 * prunable.ts), so a run that was resumed, settled late or released meanwhile is judged as it
 * stands, and the lock is held for one bounded batch only. The SQL only reads facts and deletes
 * the runs core chose; it decides nothing.
 */

/** store.ts `prunableRuns`, inside a read transaction. */
export function listPrunableRuns(conn: SqliteConnection, tenant: string, request: PrunableRunsRequest): PrunableRunsPage {
  const after = request.after ?? '';
  const scanned = conn.all<{ run_id: string }>(SCAN_RUNS, { tenant, after, scanLimit: request.scanLimit });
  const last = scanned[scanned.length - 1]?.run_id;
  if (last === undefined) return { runs: [], next: null };
  const facts = conn.all<PruneFactsRow>(FACTS_IN_PAGE, { tenant, status: request.status, after, last });
  const chosen = prunableRows(facts, request.closedAtOrBeforeMs);
  const counts = new Map(
    (chosen.length === 0
      ? []
      : conn.all<{ run_id: string; passes: number; receipts: number }>(COUNT_RECORDS, {
          tenant,
          runs: JSON.stringify(chosen.map((row) => row.run_id)),
        })
    ).map((row) => [row.run_id, row]),
  );
  const runs: PrunableRun[] = chosen.map((row) => ({
    run: decodeRunId(tenant, 'run', row.run_id),
    status: request.status,
    closedAtMs: Number(row.closed_at_ms),
    passes: counts.get(row.run_id)?.passes ?? 0,
    receipts: counts.get(row.run_id)?.receipts ?? 0,
  }));
  return { runs, next: scanned.length < request.scanLimit ? null : last };
}

/**
 * store.ts `pruneRuns`, inside the caller's `BEGIN IMMEDIATE` transaction: reads each run's facts,
 * lets core choose (core/lifecycle/prunable.ts), and removes exactly the runs it chose; the write
 * lock is held from the read to the last delete, so nothing changes in between.
 */
export function pruneRunsInTransaction(conn: SqliteConnection, tenant: string, request: PruneRunsRequest): PrunedRuns {
  const facts = request.runs.flatMap((run) => conn.get<PruneFactsRow>(RUN_FACTS_OF, { tenant, run }) ?? []);
  const removed: string[] = [];
  let passes = 0;
  let receipts = 0;
  for (const row of prunableRows(facts, request.closedAtOrBeforeMs)) {
    const key = { tenant, run: row.run_id };
    const deleted = conn.all<{ had_receipt: number }>(DELETE_PASSES, key);
    passes += deleted.length;
    receipts += deleted.filter((pass) => pass.had_receipt === 1).length + conn.run(DELETE_RECEIPTS, key);
    conn.run(DELETE_RUN, key);
    conn.run(INSERT_TOMBSTONE, { ...key, status: row.status, lastEpoch: row.last_epoch, closedAtMs: row.closed_at_ms, atMs: request.atMs });
    removed.push(row.run_id);
  }
  if (removed.length === 0) return { runs: [], passes: 0, receipts: 0, audit: null };
  const audit = appendAuditInTransaction(conn, tenant, {
    atMs: request.atMs,
    by: request.by,
    action: 'run.prune' satisfies AuditAction,
    subject: 'runs',
    detail: runPruneDetail(request, { runs: removed, passes, receipts }),
  });
  return { runs: removed, passes, receipts, audit };
}

/** store.ts `pruneRate`, inside the caller's `BEGIN IMMEDIATE` transaction. */
export function pruneRateInTransaction(conn: SqliteConnection, tenant: string, request: PruneRateRequest): PrunedRate {
  let dispatches = 0;
  for (const { grant_ref: grant } of conn.all<{ grant_ref: string }>(LIST_RATE_GRANTS, { tenant })) {
    if (dispatches >= request.limit) break;
    dispatches += conn.run(PRUNE_GRANT_ROWS, { tenant, grant, atOrBeforeMs: request.atOrBeforeMs, limit: request.limit - dispatches });
  }
  if (dispatches === 0) return { dispatches: 0, audit: null };
  const audit = appendAuditInTransaction(conn, tenant, {
    atMs: request.atMs,
    by: request.by,
    action: 'rate.prune' satisfies AuditAction,
    subject: 'rate',
    detail: { atOrBeforeMs: request.atOrBeforeMs, dispatches },
  });
  return { dispatches, audit };
}

/** store.ts `countPrunableRate`, inside a read transaction. */
export function countPrunableRate(conn: SqliteConnection, tenant: string, atOrBeforeMs: number): number {
  return conn.get<{ n: number }>(COUNT_RATE_ROWS, { tenant, atOrBeforeMs })?.n ?? 0;
}

/** The tombstone a prune left for `run`, or `null` when it has none. */
export function readTombstone(conn: SqliteConnection, tenant: string, run: string): PrunedRunRecord | null {
  const row = conn.get<PrunedRow>(SELECT_TOMBSTONE, { tenant, run });
  return row === undefined ? null : decodePrunedRow(run, row);
}

/** The status a pruned `run` closed with, or `null` when it has no tombstone (an operator's release answers `already-closed` for it). */
export function prunedStatus(conn: SqliteConnection, tenant: string, run: string): RunStatus | null {
  return readTombstone(conn, tenant, run)?.status ?? null;
}
