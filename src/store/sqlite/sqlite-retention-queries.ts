/*
 * The SQL of retention on SQLite (sqlite-retention.ts): prune candidates, the facts core judges
 * a run by, the removal of the runs it chose, tombstones, and old rate rows, as named constants
 * with named placeholders (sqlite-queries.ts says how). Mirrors postgres-retention-queries.ts.
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
export const SCAN_RUNS = `SELECT run_id FROM quota_runs
  WHERE tenant = @tenant AND run_id > @after ORDER BY run_id LIMIT @scanLimit`;
export const FACTS_IN_PAGE = `SELECT ${RUN_FACTS} FROM quota_runs r
  WHERE r.tenant = @tenant AND r.status = @status AND r.run_id > @after AND r.run_id <= @last
  ORDER BY r.run_id`;
// How many passes and receipts each of the runs core chose has (@runs, a JSON array of ids).
export const COUNT_RECORDS = `SELECT r.run_id,
    (SELECT count(*) FROM quota_passes p WHERE p.tenant = r.tenant AND p.run_id = r.run_id) AS passes,
    (SELECT count(*) FROM quota_settled x WHERE x.tenant = r.tenant AND x.run_id = r.run_id)
      + (SELECT count(*) FROM quota_passes p WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.receipt_tokens IS NOT NULL)
      AS receipts
  FROM quota_runs r
  WHERE r.tenant = @tenant AND r.run_id IN (SELECT value FROM json_each(@runs))`;
export const RUN_FACTS_OF = `SELECT ${RUN_FACTS} FROM quota_runs r WHERE r.tenant = @tenant AND r.run_id = @run`;
// Each pass removed, and whether it held its own receipt (a pass's settle writes it into the pass row).
export const DELETE_PASSES = `DELETE FROM quota_passes WHERE tenant = @tenant AND run_id = @run
  RETURNING receipt_tokens IS NOT NULL AS had_receipt`;
export const DELETE_RECEIPTS = 'DELETE FROM quota_settled WHERE tenant = @tenant AND run_id = @run';
export const DELETE_RUN = 'DELETE FROM quota_runs WHERE tenant = @tenant AND run_id = @run';
export const INSERT_TOMBSTONE = `INSERT INTO quota_pruned (tenant, run_id, status, last_epoch, closed_at_ms, pruned_at_ms)
  VALUES (@tenant, @run, @status, @lastEpoch, @closedAtMs, @atMs)
  ON CONFLICT (tenant, run_id) DO NOTHING`;
export const SELECT_TOMBSTONE = `SELECT status, last_epoch, closed_at_ms, pruned_at_ms FROM quota_pruned
  WHERE tenant = @tenant AND run_id = @run`;

// Per grant, the oldest rows first (instants grow with the ordinal): one seek of the instant index.
export const LIST_RATE_GRANTS = 'SELECT grant_ref FROM quota_rate_grants WHERE tenant = @tenant ORDER BY grant_ref';
export const PRUNE_GRANT_ROWS = `DELETE FROM quota_rate
  WHERE tenant = @tenant AND grant_ref = @grant AND ordinal IN (
    SELECT ordinal FROM quota_rate
     WHERE tenant = @tenant AND grant_ref = @grant AND reserved_at_ms <= @atOrBeforeMs
     ORDER BY reserved_at_ms LIMIT @limit)`;
export const COUNT_RATE_ROWS = `SELECT count(*) AS n FROM quota_rate WHERE tenant = @tenant AND reserved_at_ms <= @atOrBeforeMs`;
