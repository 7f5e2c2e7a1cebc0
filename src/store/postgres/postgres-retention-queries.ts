/** The retention statements of the quoted schema `s` (part of `postgresQueries`). */
export function postgresRetentionQueries(s: string) {
  const prunable = `coalesce(r.status_since_ms, r.admitted_at_ms) <= $COND_CUT
    AND NOT EXISTS (SELECT 1 FROM ${s}.quota_running x WHERE x.tenant = r.tenant AND x.run_id = r.run_id)
    AND NOT EXISTS (SELECT 1 FROM ${s}.quota_reserved h WHERE h.tenant = r.tenant AND h.run_id = r.run_id)
    AND NOT EXISTS (SELECT 1 FROM ${s}.quota_passes p
          WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.settled_at_ms IS NULL)`;
  return {
    /** Seed 0, the key `quota_batch` locks each tenant of a batch under. */
    lockTenantDecisions: `SELECT pg_advisory_xact_lock(hashtextextended('${s}.quota-admission:' || octet_length($1::text) || ':' || $1::text, 0))`,
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
