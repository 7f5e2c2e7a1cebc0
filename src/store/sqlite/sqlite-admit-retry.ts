
/** Everything an admission retry is judged on, in one statement (see `store/admit-retry.ts`). */
export const SELECT_RETRY_FACTS = `SELECT r.run_id, r.status, r.agent_name, r.agent_digest, r.chain_json, r.admitted_at_ms,
    r.last_epoch, r.budget_json, r.width,
    p.period AS pass_period, p.lease_expires_at_ms, p.settled_at_ms,
    p.hold_tokens AS pass_hold_tokens, p.hold_minor_units AS pass_hold_minor_units,
    EXISTS (SELECT 1 FROM quota_running s WHERE s.tenant = r.tenant AND s.run_id = r.run_id) AS slot_held,
    h.tokens AS hold_tokens, h.minor_units AS hold_minor_units
  FROM quota_runs r
  LEFT JOIN quota_passes p ON p.tenant = r.tenant AND p.run_id = r.run_id AND p.epoch = 1
  LEFT JOIN quota_reserved h ON h.tenant = r.tenant AND h.run_id = r.run_id
  WHERE r.tenant = @tenant AND r.run_id = @run`;
