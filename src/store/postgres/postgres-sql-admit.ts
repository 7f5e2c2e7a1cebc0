import { waitersToServeSql } from './postgres-sql-waiters.js';

/**
 * Server-side admission (store.ts `admit`, DESIGN.md decision 6) for the quoted schema `s`: one
 * function call, one round trip, one transaction, mirroring `admitInTransaction` of the SQLite
 * adapter step for step:
 *
 * 0. A run id a prune removed (its tombstone in `quota_pruned`) answers `pruned`, nothing written.
 * 1. A registered run is a retry: its pass-1 grant comes back unchanged, with no new checks
 *    (`existing`), unless it is closed (`concluded` or `released`: `closed`) or lost its first pass
 *    (`first-pass-missing`).
 * 1½. The tenant's waiting admissions are served first (`quota_grant_waiters`, issue 12).
 * 2. Halts: TypeScript passes the scope keys that would cover this run (`haltCovers` as a key set:
 *    `tenant`, `agent:<name>`, `revision:<digest>`, `subject:<each principal>`). If any of the
 *    tenant's halt rows has one of those keys, or cannot be read, every halt row comes back as JSON
 *    (`halted`) and TypeScript picks the narrowest with `coveringHalt` (or throws `STORE_CORRUPT`).
 * 3. The quota: the one given with the request, else the stored one, else none (unlimited); and
 *    the tenant's ceilings for the run's agent (`agents[<name>]`, issue 12).
 * 4. The hold formula (`holdFor`): per bounded unit `ceiling + width × per-call` in `numeric`,
 *    refused (`quota_require_fits`, nothing written) beyond 2^53 − 1; a bounded unit the budget leaves open answers `unbounded`.
 * 5. `quota_reserve` in the period of `atMs` (TypeScript passes both the monthly and the daily key).
 * 6. The run and pass 1 recorded. If a concurrent admission of the very same run id committed its
 *    run row first, this call answers as that admission's retry (`existing`).
 *
 * Every refusal returns before the first write. The figures a refusal was decided on come back with
 * it (quota in force, requested hold, counts and sums), and TypeScript rebuilds the refusal value
 * with the pure functions of `core/`, so one place words every refusal.
 */
export function admitFunctionSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_admit(
  p_tenant text, p_run text, p_agent_name text, p_agent_digest text, p_chain_json text, p_budget_json text,
  p_max_tokens bigint, p_max_call_tokens bigint, p_max_minor_units bigint, p_max_call_minor_units bigint,
  p_width bigint, p_at_ms bigint, p_lease_ms bigint, p_month_key text, p_day_key text, p_cover_keys text[],
  p_quota_given boolean, p_given_max_runs bigint, p_given_limit_tokens bigint,
  p_given_limit_minor_units bigint, p_given_period text,
  p_given_agent_max_runs bigint, p_given_agent_limit_tokens bigint, p_given_agent_limit_minor_units bigint,
  OUT outcome text, OUT run_status text, OUT grant_period text,
  OUT hold_tokens bigint, OUT hold_minor_units bigint, OUT lease_expires_at_ms bigint,
  OUT max_runs bigint, OUT limit_tokens bigint, OUT limit_minor_units bigint,
  OUT running bigint, OUT settled_tokens bigint, OUT settled_minor_units bigint,
  OUT reserved_tokens bigint, OUT reserved_minor_units bigint, OUT halts json,
  OUT agent_max_runs bigint, OUT agent_limit_tokens bigint, OUT agent_limit_minor_units bigint,
  OUT agent_running bigint, OUT plane_running bigint, OUT plane_agent_running bigint,
  OUT plane_max_runs bigint, OUT plane_agent_max_runs bigint,
  OUT agent_settled_tokens bigint, OUT agent_settled_minor_units bigint,
  OUT agent_reserved_tokens bigint, OUT agent_reserved_minor_units bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_quota jsonb;
  v_halted boolean;
  v_period_kind text;
  v_bounds_spend boolean;
  v_bounds_tokens boolean;
  v_bounds_minor_units boolean;
  v_reserve record;
  v_first record;
  v_pruned boolean;
  v_waiters boolean;
BEGIN
  -- The run, its tombstone, the halts, the stored quota and whether there may be waiters to serve
  -- in one statement (one snapshot, one executor start).
  SELECT (SELECT r.status FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run),
         EXISTS (SELECT 1 FROM ${s}.quota_pruned x WHERE x.tenant = p_tenant AND x.run_id = p_run),
         EXISTS (SELECT 1 FROM ${s}.quota_halted h
                  WHERE h.tenant = p_tenant
                    AND (h.scope = ANY (p_cover_keys) OR NOT ${s}.quota_halt_row_ok(h.scope, h.by_basis, h.at_ms))),
         CASE WHEN p_quota_given THEN NULL
              ELSE (SELECT t.quota_json FROM ${s}.quota_tenants t WHERE t.tenant = p_tenant) END,
         ${waitersToServeSql(s, 'p_tenant')}
    INTO run_status, v_pruned, v_halted, v_quota, v_waiters;
  -- A run id a prune removed is never admitted again as if new (issue 9 fault 6). A batched
  -- admission holds the tenant's admission lock, as a prune batch does, so no prune commits between
  -- this read and the admission's own.
  IF v_pruned THEN
    outcome := 'pruned';
    RETURN;
  END IF;
  IF run_status IS NOT NULL THEN
    SELECT * INTO v_first FROM ${s}.quota_first_grant(p_tenant, p_run, run_status);
    outcome := v_first.outcome;
    grant_period := v_first.grant_period;
    hold_tokens := v_first.hold_tokens;
    hold_minor_units := v_first.hold_minor_units;
    lease_expires_at_ms := v_first.lease_expires_at_ms;
    RETURN;
  END IF;

  -- Waiters first (issue 12): no later arrival takes a slot ahead of a waiter that fits.
  IF v_waiters THEN
    PERFORM ${s}.quota_grant_waiters(p_tenant, p_at_ms);
  END IF;

  IF v_halted THEN
    outcome := 'halted';
    SELECT json_agg(json_build_object('scope', h.scope, 'reason', h.reason, 'by_actor', h.by_actor,
                                      'by_basis', h.by_basis, 'at_ms', h.at_ms::text) ORDER BY h.scope)
      INTO halts FROM ${s}.quota_halted h WHERE h.tenant = p_tenant;
    RETURN;
  END IF;

  IF p_quota_given THEN
    max_runs := p_given_max_runs;
    limit_tokens := p_given_limit_tokens;
    limit_minor_units := p_given_limit_minor_units;
    v_period_kind := p_given_period;
    agent_max_runs := p_given_agent_max_runs;
    agent_limit_tokens := p_given_agent_limit_tokens;
    agent_limit_minor_units := p_given_agent_limit_minor_units;
  ELSE
    max_runs := (v_quota ->> 'maxConcurrentRuns')::numeric::bigint;
    limit_tokens := (v_quota ->> 'maxTokensPerPeriod')::numeric::bigint;
    limit_minor_units := (v_quota ->> 'maxMinorUnitsPerPeriod')::numeric::bigint;
    v_period_kind := coalesce(v_quota ->> 'period', 'monthly');
    IF p_agent_name IS NOT NULL THEN
      agent_max_runs := (v_quota -> 'agents' -> p_agent_name ->> 'maxConcurrentRuns')::numeric::bigint;
      agent_limit_tokens := (v_quota -> 'agents' -> p_agent_name ->> 'maxTokensPerPeriod')::numeric::bigint;
      agent_limit_minor_units := (v_quota -> 'agents' -> p_agent_name ->> 'maxMinorUnitsPerPeriod')::numeric::bigint;
    END IF;
  END IF;
  grant_period := CASE WHEN v_period_kind = 'daily' THEN p_day_key ELSE p_month_key END;

  -- A unit bounded by the tenant or by the run's agent is held (core holdQuotaFor, issue 12).
  v_bounds_tokens := limit_tokens IS NOT NULL OR agent_limit_tokens IS NOT NULL;
  v_bounds_minor_units := limit_minor_units IS NOT NULL OR agent_limit_minor_units IS NOT NULL;
  v_bounds_spend := v_bounds_tokens OR v_bounds_minor_units;
  IF v_bounds_spend THEN
    hold_tokens := 0;
    hold_minor_units := 0;
    IF v_bounds_tokens THEN
      IF p_max_tokens IS NULL OR p_max_call_tokens IS NULL THEN
        outcome := 'unbounded';
        RETURN;
      END IF;
      IF coalesce((p_max_tokens)::numeric, 0) + coalesce((p_width::numeric * p_max_call_tokens)::numeric, 0) > 9007199254740991 THEN
        PERFORM ${s}.quota_require_fits('budget.maxTokens', 'the hold maxTokens + width × maxCallTokens',
                                        p_max_tokens, p_width::numeric * p_max_call_tokens);
      END IF;
      hold_tokens := p_max_tokens + p_width::numeric * p_max_call_tokens;
    END IF;
    IF v_bounds_minor_units THEN
      IF p_max_minor_units IS NULL OR p_max_call_minor_units IS NULL THEN
        outcome := 'unbounded';
        RETURN;
      END IF;
      IF coalesce((p_max_minor_units)::numeric, 0) + coalesce((p_width::numeric * p_max_call_minor_units)::numeric, 0) > 9007199254740991 THEN
        PERFORM ${s}.quota_require_fits('budget.maxMinorUnits', 'the hold maxMinorUnits + width × maxCallMinorUnits',
                                        p_max_minor_units, p_width::numeric * p_max_call_minor_units);
      END IF;
      hold_minor_units := p_max_minor_units + p_width::numeric * p_max_call_minor_units;
    END IF;
  END IF;

  SELECT * INTO v_reserve FROM ${s}.quota_reserve(
    p_tenant, p_run, max_runs,
    CASE WHEN v_bounds_spend THEN grant_period END, hold_tokens, hold_minor_units,
    limit_tokens, limit_minor_units, p_at_ms,
    p_agent_name, agent_max_runs, agent_limit_tokens, agent_limit_minor_units);
  running := v_reserve.running;
  agent_running := v_reserve.agent_running;
  plane_running := v_reserve.plane_running;
  plane_agent_running := v_reserve.plane_agent_running;
  plane_max_runs := v_reserve.plane_max_runs;
  plane_agent_max_runs := v_reserve.plane_agent_max_runs;
  agent_settled_tokens := v_reserve.agent_settled_tokens;
  agent_settled_minor_units := v_reserve.agent_settled_minor_units;
  agent_reserved_tokens := v_reserve.agent_reserved_tokens;
  agent_reserved_minor_units := v_reserve.agent_reserved_minor_units;
  settled_tokens := v_reserve.settled_tokens;
  settled_minor_units := v_reserve.settled_minor_units;
  reserved_tokens := v_reserve.reserved_tokens;
  reserved_minor_units := v_reserve.reserved_minor_units;
  IF v_reserve.outcome <> 'ok' THEN
    outcome := v_reserve.outcome;
    RETURN;
  END IF;

  INSERT INTO ${s}.quota_runs AS r
      (tenant, run_id, status, agent_name, agent_digest, chain_json, budget_json, width, admitted_at_ms, last_epoch,
       status_since_ms)
    VALUES (p_tenant, p_run, 'running', p_agent_name, p_agent_digest, p_chain_json::jsonb, p_budget_json, p_width, p_at_ms, 1,
            p_at_ms)
    ON CONFLICT (tenant, run_id) DO NOTHING;
  IF NOT FOUND THEN
    -- A concurrent admission of this very run committed first: this call is its retry.
    SELECT r.status INTO run_status FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run;
    SELECT * INTO v_first FROM ${s}.quota_first_grant(p_tenant, p_run, run_status);
    outcome := v_first.outcome;
    grant_period := v_first.grant_period;
    hold_tokens := v_first.hold_tokens;
    hold_minor_units := v_first.hold_minor_units;
    lease_expires_at_ms := v_first.lease_expires_at_ms;
    RETURN;
  END IF;
  run_status := 'running';

  -- The grant reports the run's hold as it stands now (null when it holds none): the one just taken,
  -- else whatever the run held before (an earlier reserve of the same run id), read back.
  IF NOT v_reserve.hold_taken THEN
    hold_tokens := NULL;
    hold_minor_units := NULL;
    SELECT q.tokens, q.minor_units INTO hold_tokens, hold_minor_units
      FROM ${s}.quota_reserved q WHERE q.tenant = p_tenant AND q.run_id = p_run;
  END IF;
  lease_expires_at_ms := least(p_at_ms::numeric + p_lease_ms, 9007199254740991)::bigint;
  INSERT INTO ${s}.quota_passes (tenant, run_id, epoch, period, takes_slot, started_at_ms, lease_expires_at_ms,
                                 hold_tokens, hold_minor_units)
    VALUES (p_tenant, p_run, 1, grant_period, true, p_at_ms, lease_expires_at_ms, hold_tokens, hold_minor_units);
  outcome := 'admitted';
END
$fn$;
`;
}
