/** The retention statements of the quoted schema `s` (part of `postgresQueries`). */
export function postgresRetentionQueries(s: string) {
  // What a prune reads of a run to judge it (store/retention.ts `PruneFactsRow`); core/lifecycle/
  // prunable.ts decides from these whether it may go.
  const runFacts = `r.run_id, r.status, r.last_epoch, coalesce(r.status_since_ms, r.admitted_at_ms) AS closed_at_ms,
    EXISTS (SELECT 1 FROM ${s}.quota_running x WHERE x.tenant = r.tenant AND x.run_id = r.run_id) AS holds_slot,
    EXISTS (SELECT 1 FROM ${s}.quota_reserved h WHERE h.tenant = r.tenant AND h.run_id = r.run_id) AS holds_hold,
    EXISTS (SELECT 1 FROM ${s}.quota_passes p
             WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.settled_at_ms IS NULL) AS pass_unsettled`;
  return {
    scanRuns: `SELECT run_id FROM ${s}.quota_runs WHERE tenant = $1 AND run_id > $2 ORDER BY run_id LIMIT $3`,
    /** The facts of the runs of status $2 in the page ($3, $4]. */
    factsInPage: `SELECT ${runFacts} FROM ${s}.quota_runs r
      WHERE r.tenant = $1 AND r.status = $2 AND r.run_id > $3 AND r.run_id <= $4
      ORDER BY r.run_id`,
    /** How many passes and receipts each of the runs $2 (the ones core chose) has. */
    countRecords: `SELECT r.run_id,
        (SELECT count(*) FROM ${s}.quota_passes p WHERE p.tenant = r.tenant AND p.run_id = r.run_id)::int AS passes,
        ((SELECT count(*) FROM ${s}.quota_settled x WHERE x.tenant = r.tenant AND x.run_id = r.run_id)
          + (SELECT count(*) FROM ${s}.quota_passes p
              WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.receipt_tokens IS NOT NULL))::int AS receipts
      FROM ${s}.quota_runs r
      WHERE r.tenant = $1 AND r.run_id = ANY ($2::text[])`,
    /**
     * The facts of the runs $2, each run row locked for the rest of the transaction (skipping a run
     * row another transaction holds, so it is left for the next prune, never waited on).
     */
    lockRunFacts: `SELECT ${runFacts} FROM ${s}.quota_runs r
      WHERE r.tenant = $1 AND r.run_id = ANY ($2::text[])
      ORDER BY r.run_id FOR UPDATE OF r SKIP LOCKED`,
    /**
     * One batch's removal in one statement: delete the passes and receipts of the runs $2 (the ones
     * core chose among those `lockRunFacts` locked), write their tombstones stamped $3, delete their
     * registry rows, and answer the run ids with the counts.
     */
    removeRuns: `WITH chosen AS (
        SELECT r.run_id, r.status, r.last_epoch, coalesce(r.status_since_ms, r.admitted_at_ms) AS closed_at_ms
          FROM ${s}.quota_runs r
         WHERE r.tenant = $1 AND r.run_id = ANY ($2::text[])),
      passes AS (DELETE FROM ${s}.quota_passes p USING chosen c WHERE p.tenant = $1 AND p.run_id = c.run_id
        RETURNING p.receipt_tokens IS NOT NULL AS had_receipt),
      receipts AS (DELETE FROM ${s}.quota_settled x USING chosen c WHERE x.tenant = $1 AND x.run_id = c.run_id RETURNING 1),
      tombstones AS (INSERT INTO ${s}.quota_pruned (tenant, run_id, status, last_epoch, closed_at_ms, pruned_at_ms)
        SELECT $1, c.run_id, c.status, c.last_epoch, c.closed_at_ms, $3 FROM chosen c
        ON CONFLICT (tenant, run_id) DO NOTHING RETURNING 1),
      runs AS (DELETE FROM ${s}.quota_runs r USING chosen c WHERE r.tenant = $1 AND r.run_id = c.run_id RETURNING r.run_id)
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
