/** The statements of the waiter verbs for the quoted schema `s`. */
export function waiterQueries(s: string) {
  return {
    lockTenant: `SELECT ${s}.quota_admission_lock($1)`,
    grantWaiters: `SELECT ${s}.quota_grant_waiters($1, $2) AS granted`,
    admitNow: `SELECT * FROM ${s}.quota_admit($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16::text[],
      $17, $18, $19, $20, $21, $22, $23, $24)`,
    selectWaiter: `SELECT run_id, seq, state, enqueued_at_ms FROM ${s}.quota_waiters WHERE tenant = $1 AND run_id = $2`,
    insertWaiter: `INSERT INTO ${s}.quota_waiters
      (tenant, run_id, agent_name, agent_digest, chain_json, budget_json, max_tokens, max_call_tokens, max_minor_units,
       max_call_minor_units, width, enqueued_at_ms, lease_ms, cover_keys, quota_given, given_max_runs, given_limit_tokens,
       given_limit_minor_units, given_period, given_agent_max_runs, given_agent_limit_tokens, given_agent_limit_minor_units,
       seq, state, wait_until_ms, lease_expires_at_ms)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::text[], $15, $16, $17, $18, $19, $20, $21, $22,
              coalesce((SELECT max(w.seq) FROM ${s}.quota_waiters w WHERE w.tenant = $1), 0) + 1, 'waiting', $23, $24)`,
    renewWaiter: `UPDATE ${s}.quota_waiters SET lease_expires_at_ms = greatest(lease_expires_at_ms, $3)
      WHERE tenant = $1 AND run_id = $2`,
    requeueWaiter: `UPDATE ${s}.quota_waiters SET state = 'waiting', decided_at_ms = NULL,
      lease_expires_at_ms = greatest(lease_expires_at_ms, $3) WHERE tenant = $1 AND run_id = $2`,
    deleteWaiter: `DELETE FROM ${s}.quota_waiters WHERE tenant = $1 AND run_id = $2`,
    countAhead: `SELECT count(*)::bigint AS ahead FROM ${s}.quota_waiters
      WHERE tenant = $1 AND state = 'waiting' AND lease_expires_at_ms > $2 AND seq < $3`,
    lapsedWaiters: `SELECT run_id, state FROM ${s}.quota_waiters WHERE tenant = $1 AND lease_expires_at_ms <= $2 ORDER BY seq`,
    withdrawGrant: `SELECT ${s}.quota_withdraw_grant($1, $2)`,
    requeueLapsedGrant: `SELECT ${s}.quota_requeue_lapsed_grant($1, $2, $3, $4) AS requeued`,
    queueFigures: `SELECT
        count(*) FILTER (WHERE state = 'waiting' AND lease_expires_at_ms > $2)::bigint AS depth,
        min(enqueued_at_ms) FILTER (WHERE state = 'waiting' AND lease_expires_at_ms > $2) AS oldest,
        count(*) FILTER (WHERE state = 'granted')::bigint AS uncollected
      FROM ${s}.quota_waiters WHERE tenant = $1`,
  } as const;
}

/** The waiter statements of one store. */
export type WaiterQueries = ReturnType<typeof waiterQueries>;
