/** The channel every PostgreSQL store's grants are announced on; the payload is `<quoted schema>:<tenant>`. */
export const WAITER_CHANNEL = 'quotaplane_waiters';

/**
 * Server-side waiting admissions (issue 12) for the quoted schema `s`, mirroring
 * `sqlite-waiters.ts`:
 *
 * `quota_grant_queue(tenant, at_ms, limit)` grants up to `limit` of the tenant's waiters, first
 * come first served: each live waiter in `seq` order is admitted by `quota_admit` exactly as its
 * caller asked: admitted → `granted`; `too-many-runs` by the tenant's or the plane's ceiling →
 * stop (nobody behind it goes first); by its own agent's ceiling (in the tenant or plane-wide) →
 * it keeps its place and the next is tried (no head-of-line blocking); any other answer (a halt,
 * spend, a run id taken meanwhile, an amount beyond the bound) → `refused`, for its caller to hear
 * on collect. A waiter whose lease lapsed is removed.
 *
 * `quota_grant_waiters(tenant, at_ms)` serves the queues after a slot freed or before an admission:
 * without a plane-wide `maxConcurrentRuns`, the tenant's own queue under its admission lock (taken
 * again if the caller holds it: advisory locks are re-entrant); with one, every tenant with live
 * waiters in turn (start-time fair queueing over `quota_wait_turns`, weighted by the plane
 * ceiling's `weights`), one grant per turn, until the plane is full or nobody fits. Another
 * tenant's lock is only tried there, never waited for (see the lock order in
 * `postgres-sql-reserve.ts`): a busy tenant is passed over this time. A transaction-local setting
 * keeps `quota_admit` (which serves the queues before it decides) from recursing. Every tenant it
 * granted to gets `NOTIFY quotaplane_waiters, '<schema>:<tenant>'`, delivered when the
 * transaction commits. Answers how many it granted.
 *
 * `quota_withdraw_grant(tenant, run)` takes back a grant nobody collected: slot and hold (with
 * their counters), passes and run row go, as if it had never been admitted.
 */
/**
 * A boolean SQL expression for the quoted schema `s`: false exactly when `quota_grant_waiters`
 * of the tenant `tenant` (an SQL expression) would return at once, granting nothing: the tenant has
 * no waiting admission and no plane-wide concurrency ceiling is set. Callers test it before the
 * call, since a call is a statement of its own and almost every decision has no waiter to serve.
 */
export function waitersToServeSql(s: string, tenant: string): string {
  return `(EXISTS (SELECT 1 FROM ${s}.quota_waiters w WHERE w.tenant = ${tenant} AND w.state = 'waiting')
     OR EXISTS (SELECT 1 FROM ${s}.quota_plane p WHERE p.id = 1 AND p.ceiling_json ->> 'maxConcurrentRuns' IS NOT NULL))`;
}

export function waiterFunctionsSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_grant_queue(p_tenant text, p_at_ms bigint, p_limit integer,
  OUT granted integer, OUT stop text)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_w record;
  v_a record;
  v_month text;
  v_day text;
BEGIN
  granted := 0;
  stop := 'empty';
  v_month := to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM');
  v_day := to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD');
  FOR v_w IN SELECT * FROM ${s}.quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting' ORDER BY w.seq LOOP
    IF granted >= p_limit THEN
      stop := 'limit';
      RETURN;
    END IF;
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
      granted := granted + 1;
    ELSIF v_a.outcome = 'too-many-runs' THEN
      -- Which ceiling bound it, narrowest first (core admissionConcurrencyRefusal).
      IF v_a.agent_max_runs IS NOT NULL AND v_a.agent_running >= v_a.agent_max_runs THEN
        CONTINUE;  -- its own agent's ceiling: the waiters behind it may still fit
      ELSIF v_a.max_runs IS NOT NULL AND v_a.running >= v_a.max_runs THEN
        stop := 'tenant-full';
        RETURN;
      ELSIF v_a.plane_agent_max_runs IS NOT NULL AND v_a.plane_agent_running >= v_a.plane_agent_max_runs THEN
        CONTINUE;  -- its agent's plane-wide ceiling: the same
      ELSE
        stop := 'plane-full';
        RETURN;
      END IF;
    ELSE
      UPDATE ${s}.quota_waiters w SET state = 'refused', decided_at_ms = p_at_ms
       WHERE w.tenant = p_tenant AND w.run_id = v_w.run_id;
    END IF;
  END LOOP;
  IF granted >= p_limit THEN
    stop := 'limit';
  END IF;
END
$fn$;

CREATE FUNCTION ${s}.quota_grant_waiters(p_tenant text, p_at_ms bigint) RETURNS integer
LANGUAGE plpgsql AS $fn$
DECLARE
  v_granted integer := 0;
  v_plane_max bigint;
  v_weights jsonb;
  v_passed text[] := ARRAY[]::text[];
  v_next text;
  v_start bigint;
  v_plane_time bigint;
  v_weight bigint;
  v_q record;
BEGIN
  IF coalesce(current_setting('quotaplane.granting', true), '') = 'on' THEN
    RETURN 0;
  END IF;
  SELECT (p.ceiling_json ->> 'maxConcurrentRuns')::numeric::bigint, p.ceiling_json -> 'weights'
    INTO v_plane_max, v_weights FROM ${s}.quota_plane p WHERE p.id = 1;
  IF v_plane_max IS NULL THEN
    IF NOT EXISTS (SELECT 1 FROM ${s}.quota_waiters w WHERE w.tenant = p_tenant AND w.state = 'waiting') THEN
      RETURN 0;
    END IF;
    PERFORM ${s}.quota_admission_lock(p_tenant);
    PERFORM set_config('quotaplane.granting', 'on', true);
    SELECT * INTO v_q FROM ${s}.quota_grant_queue(p_tenant, p_at_ms, 2147483647);
    v_granted := v_q.granted;
    PERFORM set_config('quotaplane.granting', 'off', true);
    IF v_granted > 0 THEN
      PERFORM pg_notify('${WAITER_CHANNEL}', '${s}:' || p_tenant);
    END IF;
    RETURN v_granted;
  END IF;

  -- The plane-wide ceiling: every tenant with live waiters, in turn (start-time fair queueing).
  IF NOT EXISTS (SELECT 1 FROM ${s}.quota_waiters w WHERE w.state = 'waiting' AND w.lease_expires_at_ms > p_at_ms) THEN
    RETURN 0;
  END IF;
  PERFORM set_config('quotaplane.granting', 'on', true);
  LOOP
    v_plane_time := coalesce((SELECT t.vtime FROM ${s}.quota_wait_turns t WHERE t.tenant = '*'), 0);
    SELECT w.tenant, greatest(coalesce(t.vtime, 0), v_plane_time) AS start INTO v_next, v_start
      FROM (SELECT DISTINCT w.tenant FROM ${s}.quota_waiters w
             WHERE w.state = 'waiting' AND w.lease_expires_at_ms > p_at_ms AND NOT (w.tenant = ANY (v_passed))) w
      LEFT JOIN ${s}.quota_wait_turns t ON t.tenant = w.tenant
     ORDER BY 2, 1
     LIMIT 1;
    EXIT WHEN v_next IS NULL;
    -- Another tenant's lock is only tried, never waited for: this transaction may hold the plane
    -- lock, which that tenant's own decisions take after theirs. A busy tenant is passed over.
    IF v_next <> p_tenant
       AND NOT pg_try_advisory_xact_lock(hashtextextended('quota-admission:' || octet_length(v_next) || ':' || v_next, 0)) THEN
      v_passed := v_passed || v_next;
      CONTINUE;
    END IF;
    IF v_next = p_tenant THEN
      PERFORM ${s}.quota_admission_lock(p_tenant);
    END IF;
    SELECT * INTO v_q FROM ${s}.quota_grant_queue(v_next, p_at_ms, 1);
    IF v_q.granted > 0 THEN
      v_granted := v_granted + 1;
      v_weight := greatest(1, coalesce((v_weights ->> v_next)::numeric::bigint, 1));
      INSERT INTO ${s}.quota_wait_turns AS t (tenant, vtime) VALUES (v_next, v_start + greatest(1, 1000000 / v_weight))
        ON CONFLICT (tenant) DO UPDATE SET vtime = excluded.vtime;
      INSERT INTO ${s}.quota_wait_turns AS t (tenant, vtime) VALUES ('*', v_start)
        ON CONFLICT (tenant) DO UPDATE SET vtime = excluded.vtime;
      PERFORM pg_notify('${WAITER_CHANNEL}', '${s}:' || v_next);
      CONTINUE;
    END IF;
    EXIT WHEN v_q.stop = 'plane-full';
    v_passed := v_passed || v_next;
  END LOOP;
  PERFORM set_config('quotaplane.granting', 'off', true);
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

-- A waiter's grant whose lease lapsed at p_at_ms before its caller collected it: withdrawn whole
-- (quota_withdraw_grant) and the waiter back in its own place, waiting, its lease at least
-- p_lease_expires_at_ms. False (nothing changed) when the run is no such grant. See
-- requeueLapsedGrant of the SQLite adapter.
CREATE FUNCTION ${s}.quota_requeue_lapsed_grant(p_tenant text, p_run text, p_at_ms bigint, p_lease_expires_at_ms bigint)
RETURNS boolean
LANGUAGE plpgsql AS $fn$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM ${s}.quota_waiters w
      JOIN ${s}.quota_runs r ON r.tenant = w.tenant AND r.run_id = w.run_id
      LEFT JOIN ${s}.quota_passes p ON p.tenant = w.tenant AND p.run_id = w.run_id AND p.epoch = 1
     WHERE w.tenant = p_tenant AND w.run_id = p_run AND w.state = 'granted'
       AND (r.status = 'stranded' OR (r.status = 'running' AND p.lease_expires_at_ms <= p_at_ms))) THEN
    RETURN false;
  END IF;
  PERFORM ${s}.quota_withdraw_grant(p_tenant, p_run);
  UPDATE ${s}.quota_waiters SET state = 'waiting', decided_at_ms = NULL,
         lease_expires_at_ms = greatest(lease_expires_at_ms, p_lease_expires_at_ms)
   WHERE tenant = p_tenant AND run_id = p_run;
  RETURN true;
END
$fn$;
`;
}
