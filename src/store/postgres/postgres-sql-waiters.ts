/** The channel every PostgreSQL store's grants are announced on; the payload is `<quoted schema>:<tenant>`. */
export const WAITER_CHANNEL = 'quotaplane_waiters';

/**
 * Server-side waiting admissions (issue 12) for the quoted schema `s`, mirroring
 * `sqlite-waiters.ts`:
 *
 * `quota_grant_waiters(tenant, at_ms)` grants the tenant's waiters, first come first served, into
 * the room there is at `at_ms`, under the tenant's admission lock (taken again if the caller holds
 * it: advisory locks are re-entrant). Each live waiter in `seq` order is admitted by `quota_admit`
 * exactly as its caller asked: admitted → `granted`; `too-many-runs` → stop (nobody behind it goes
 * first); any other answer (a halt, spend, a run id taken meanwhile, an amount beyond the bound) →
 * `refused`, for its caller to hear on collect. A waiter whose lease lapsed is removed. A
 * transaction-local setting keeps `quota_admit` (which serves the queue before it decides) from
 * recursing. When it granted anyone it sends `NOTIFY quotaplane_waiters, '<schema>:<tenant>'`,
 * delivered when the transaction commits. Answers how many it granted.
 *
 * `quota_withdraw_grant(tenant, run)` takes back a grant nobody collected: slot and hold (with
 * their counters), passes and run row go, as if it had never been admitted.
 */
export function waiterFunctionsSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_grant_waiters(p_tenant text, p_at_ms bigint) RETURNS integer
LANGUAGE plpgsql AS $fn$
DECLARE
  v_w record;
  v_a record;
  v_granted integer := 0;
  v_month text;
  v_day text;
BEGIN
  IF coalesce(current_setting('quotaplane.granting', true), '') = 'on' THEN
    RETURN 0;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM ${s}.quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting') THEN
    RETURN 0;
  END IF;
  PERFORM ${s}.quota_admission_lock(p_tenant);
  PERFORM set_config('quotaplane.granting', 'on', true);
  v_month := to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM');
  v_day := to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD');
  FOR v_w IN SELECT * FROM ${s}.quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting' ORDER BY w.seq LOOP
    IF v_w.lease_expires_at_ms <= p_at_ms THEN
      DELETE FROM ${s}.quota_waiters w WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      CONTINUE;
    END IF;
    IF EXISTS (SELECT 1 FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = v_w.run_id) THEN
      UPDATE ${s}.quota_waiters w SET state = 'refused', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      CONTINUE;
    END IF;
    BEGIN
      SELECT * INTO v_a FROM ${s}.quota_admit(
        p_tenant, v_w.run_id, v_w.agent_name, v_w.agent_digest, v_w.chain_json, v_w.budget_json,
        v_w.max_tokens, v_w.max_call_tokens, v_w.max_minor_units, v_w.max_call_minor_units,
        v_w.width, p_at_ms, v_w.lease_ms, v_month, v_day, v_w.cover_keys,
        v_w.quota_given, v_w.given_max_runs, v_w.given_limit_tokens, v_w.given_limit_minor_units, v_w.given_period,
        v_w.given_agent_max_runs, v_w.given_agent_limit_tokens, v_w.given_agent_limit_minor_units);
    EXCEPTION WHEN OTHERS THEN
      -- Raised before any write of this admission (an amount beyond the bound): its caller hears it on collect.
      UPDATE ${s}.quota_waiters w SET state = 'refused', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      CONTINUE;
    END;
    IF v_a.outcome = 'admitted' THEN
      UPDATE ${s}.quota_waiters w SET state = 'granted', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
      v_granted := v_granted + 1;
    ELSIF v_a.outcome = 'too-many-runs' THEN
      EXIT;
    ELSE
      UPDATE ${s}.quota_waiters w SET state = 'refused', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
    END IF;
  END LOOP;
  PERFORM set_config('quotaplane.granting', 'off', true);
  IF v_granted > 0 THEN
    PERFORM pg_notify('${WAITER_CHANNEL}', '${s}:' || p_tenant);
  END IF;
  RETURN v_granted;
END
$fn$;

CREATE FUNCTION ${s}.quota_withdraw_grant(p_tenant text, p_run text) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM 1 FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  PERFORM ${s}.quota_hold_drop(p_tenant, p_run);
  PERFORM ${s}.quota_slot_give(p_tenant, p_run);
  DELETE FROM ${s}.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run;
  DELETE FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run;
END
$fn$;
`;
}
