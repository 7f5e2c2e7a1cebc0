/**
 * As migration 2 created it; frozen (migrations only move forward). Migration 4 replaces these
 * functions (`postgres-sql-admit.ts`, `postgres-sql-passes.ts`).
 *
 * Server-side resume, pass settlement and dispatch (store.ts) for the quoted schema `s`, each one
 * function call, mirroring `resumeInTransaction`, `settlePassInTransaction` and
 * `dispatchInTransaction` of the SQLite adapter.
 *
 * Row locks are always taken in one order (hold row, then run row, then pass row), so a resume
 * racing a settlement of the same run waits instead of deadlocking. Outcomes that are faults in
 * TypeScript (`not-found`, `concluded`, `corrupt-status`, `conflict`) come back as values; the
 * caller throws the matching `QuotaError`, and nothing was written on those paths.
 */
export function lifecycleFunctionSqlV2(s: string): string {
  return `
-- Resume (contract §8.4): never gated. The period of atMs under the stored quota, the hold carried
-- there whole, the next epoch (the run row's update serialises concurrent resumes), status running.
CREATE OR REPLACE FUNCTION ${s}.quota_resume(
  p_tenant text, p_run text, p_at_ms bigint, p_lease_ms bigint, p_month_key text, p_day_key text,
  OUT outcome text, OUT grant_epoch bigint, OUT grant_period text,
  OUT hold_tokens bigint, OUT hold_minor_units bigint, OUT lease_expires_at_ms bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_status text;
BEGIN
  SELECT r.status INTO v_status FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run;
  IF NOT FOUND THEN
    outcome := 'not-found';
    RETURN;
  END IF;
  IF v_status NOT IN ('running', 'paused', 'concluded') THEN
    outcome := 'corrupt-status';
    RETURN;
  END IF;
  IF v_status = 'concluded' THEN
    outcome := 'concluded';
    RETURN;
  END IF;
  SELECT CASE WHEN coalesce(t.quota_json ->> 'period', 'monthly') = 'daily' THEN p_day_key ELSE p_month_key END
    INTO grant_period FROM ${s}.quota_tenants t WHERE t.tenant = p_tenant;
  grant_period := coalesce(grant_period, p_month_key);
  UPDATE ${s}.quota_reserved q SET period = grant_period
   WHERE q.tenant = p_tenant AND q.run_id = p_run AND q.period <> grant_period;
  UPDATE ${s}.quota_runs r SET status = 'running', last_epoch = r.last_epoch + 1
   WHERE r.tenant = p_tenant AND r.run_id = p_run
   RETURNING r.last_epoch INTO grant_epoch;
  SELECT q.tokens, q.minor_units INTO hold_tokens, hold_minor_units
    FROM ${s}.quota_reserved q WHERE q.tenant = p_tenant AND q.run_id = p_run;
  lease_expires_at_ms := least(p_at_ms::numeric + p_lease_ms, 9007199254740991)::bigint;
  INSERT INTO ${s}.quota_passes (tenant, run_id, epoch, period, takes_slot, started_at_ms, lease_expires_at_ms,
                                 hold_tokens, hold_minor_units)
    VALUES (p_tenant, p_run, grant_epoch, grant_period, false, p_at_ms, lease_expires_at_ms, hold_tokens, hold_minor_units);
  outcome := 'resumed';
END
$fn$;

-- The end of a pass (contract §8.3): the receipt comes from the pass row (its period, whether it
-- took the slot) and is applied by quota_settle. A newly written receipt marks the pass settled and,
-- when no newer pass has started, the run concluded or paused.
CREATE OR REPLACE FUNCTION ${s}.quota_settle_pass(
  p_tenant text, p_run text, p_epoch bigint, p_tokens bigint, p_minor_units bigint,
  p_concludes boolean, p_at_ms bigint,
  OUT outcome text, OUT receipt_period text, OUT receipt_release_slot boolean)
LANGUAGE plpgsql AS $fn$
BEGIN
  SELECT p.period, p.takes_slot INTO receipt_period, receipt_release_slot
    FROM ${s}.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  IF NOT FOUND THEN
    outcome := 'not-found';
    RETURN;
  END IF;
  outcome := ${s}.quota_settle(p_tenant, p_run, p_epoch, receipt_period, p_tokens, p_minor_units,
                                receipt_release_slot, p_concludes);
  IF outcome = 'settled' THEN
    UPDATE ${s}.quota_runs r SET status = CASE WHEN p_concludes THEN 'concluded' ELSE 'paused' END
     WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.last_epoch = p_epoch;
    UPDATE ${s}.quota_passes p SET settled_at_ms = p_at_ms
     WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch AND p.settled_at_ms IS NULL;
  END IF;
END
$fn$;

-- A run's dispatch (DESIGN.md decision 11): the caller's ceilings followed by the stored quota's
-- ceilings for the grant, then quota_reserve_rate. The configured ceilings come back so TypeScript
-- can rebuild a refusal over exactly the list that was judged.
CREATE OR REPLACE FUNCTION ${s}.quota_dispatch(
  p_tenant text, p_run text, p_grant text, p_dispatch text,
  p_counts bigint[], p_windows bigint[], p_at_ms bigint, p_exempt boolean,
  OUT outcome text, OUT instants bigint[], OUT configured_counts bigint[], OUT configured_windows bigint[])
LANGUAGE plpgsql AS $fn$
DECLARE
  v_status text;
  v_judged record;
BEGIN
  SELECT r.status INTO v_status FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run;
  IF NOT FOUND THEN
    outcome := 'not-found';
    RETURN;
  END IF;
  IF v_status NOT IN ('running', 'paused', 'concluded') THEN
    outcome := 'corrupt-status';
    RETURN;
  END IF;
  IF v_status = 'concluded' THEN
    outcome := 'concluded';
    RETURN;
  END IF;
  SELECT coalesce(array_agg((e.ceiling ->> 'count')::numeric::bigint ORDER BY e.position), '{}'),
         coalesce(array_agg((e.ceiling ->> 'windowSeconds')::numeric::bigint ORDER BY e.position), '{}')
    INTO configured_counts, configured_windows
    FROM ${s}.quota_tenants t,
         jsonb_array_elements(t.quota_json -> 'rateCeilings' -> p_grant) WITH ORDINALITY AS e(ceiling, position)
   WHERE t.tenant = p_tenant;
  SELECT * INTO v_judged FROM ${s}.quota_reserve_rate(
    p_tenant, p_grant, p_run, p_dispatch,
    p_counts || configured_counts, p_windows || configured_windows, p_at_ms, p_exempt);
  outcome := v_judged.outcome;
  instants := v_judged.instants;
END
$fn$;
`;
}
