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

// What a prune reads of a run to judge it (store/retention.ts `PruneFactsRow`); core/lifecycle/
// prunable.ts decides from these whether it may go.
const RUN_FACTS = `r.run_id, r.status, r.last_epoch, coalesce(r.status_since_ms, r.admitted_at_ms) AS closed_at_ms,
    EXISTS (SELECT 1 FROM quota_running s WHERE s.tenant = r.tenant AND s.run_id = r.run_id) AS holds_slot,
    EXISTS (SELECT 1 FROM quota_reserved h WHERE h.tenant = r.tenant AND h.run_id = r.run_id) AS holds_hold,
    EXISTS (SELECT 1 FROM quota_passes p
             WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.settled_at_ms IS NULL) AS pass_unsettled`;

// One page of the tenant's runs of every status by primary key, at most @scanLimit of them, and
// the facts of those of @status among them. No index by status is kept for closed runs (it would
// cost a page write per admission and settle), and nearly every run a prune walks is closed anyway.
const SCAN_RUNS = `SELECT run_id FROM quota_runs
  WHERE tenant = @tenant AND run_id > @after ORDER BY run_id LIMIT @scanLimit`;
const FACTS_IN_PAGE = `SELECT ${RUN_FACTS} FROM quota_runs r
  WHERE r.tenant = @tenant AND r.status = @status AND r.run_id > @after AND r.run_id <= @last
  ORDER BY r.run_id`;
// How many passes and receipts each of the runs core chose has (@runs, a JSON array of ids).
const COUNT_RECORDS = `SELECT r.run_id,
    (SELECT count(*) FROM quota_passes p WHERE p.tenant = r.tenant AND p.run_id = r.run_id) AS passes,
    (SELECT count(*) FROM quota_settled x WHERE x.tenant = r.tenant AND x.run_id = r.run_id)
      + (SELECT count(*) FROM quota_passes p WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.receipt_tokens IS NOT NULL)
      AS receipts
  FROM quota_runs r
  WHERE r.tenant = @tenant AND r.run_id IN (SELECT value FROM json_each(@runs))`;
const RUN_FACTS_OF = `SELECT ${RUN_FACTS} FROM quota_runs r WHERE r.tenant = @tenant AND r.run_id = @run`;
// Each pass removed, and whether it held its own receipt (a pass's settle writes it into the pass row).
const DELETE_PASSES = `DELETE FROM quota_passes WHERE tenant = @tenant AND run_id = @run
  RETURNING receipt_tokens IS NOT NULL AS had_receipt`;
const DELETE_RECEIPTS = 'DELETE FROM quota_settled WHERE tenant = @tenant AND run_id = @run';
const DELETE_RUN = 'DELETE FROM quota_runs WHERE tenant = @tenant AND run_id = @run';
const INSERT_TOMBSTONE = `INSERT INTO quota_pruned (tenant, run_id, status, last_epoch, closed_at_ms, pruned_at_ms)
  VALUES (@tenant, @run, @status, @lastEpoch, @closedAtMs, @atMs)
  ON CONFLICT (tenant, run_id) DO NOTHING`;
const SELECT_TOMBSTONE = `SELECT status, last_epoch, closed_at_ms, pruned_at_ms FROM quota_pruned
  WHERE tenant = @tenant AND run_id = @run`;

// Per grant, the oldest rows first (instants grow with the ordinal): one seek of the instant index.
const LIST_RATE_GRANTS = 'SELECT grant_ref FROM quota_rate_grants WHERE tenant = @tenant ORDER BY grant_ref';
const PRUNE_GRANT_ROWS = `DELETE FROM quota_rate
  WHERE tenant = @tenant AND grant_ref = @grant AND ordinal IN (
    SELECT ordinal FROM quota_rate
     WHERE tenant = @tenant AND grant_ref = @grant AND reserved_at_ms <= @atOrBeforeMs
     ORDER BY reserved_at_ms LIMIT @limit)`;
const COUNT_RATE_ROWS = `SELECT count(*) AS n FROM quota_rate WHERE tenant = @tenant AND reserved_at_ms <= @atOrBeforeMs`;

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
