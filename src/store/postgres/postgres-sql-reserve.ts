/**
 * Server-side `reserve` (contract §6.2, §7.1) for the quoted schema `s`: one function call, one
 * round trip, one transaction. It mirrors `reserveInTransaction` of the SQLite adapter and the pure
 * `concurrencyRefusal` and `checkSpend` of `core/`: the same fast path, the same order (concurrency
 * with the full count, then spend from one snapshot, only when a hold is asked for and none is
 * held), the same strict-greater comparison, done in `numeric` so nothing overflows. It answers
 * the figures it decided on; the TypeScript caller rebuilds the refusal value with the core
 * functions from them, so messages and fields come from one place and a disagreement is caught.
 *
 * Admissions of one tenant serialise on a transaction-scoped advisory lock keyed by
 * `quota-admission:<byte length>:<tenant>` with seed 0 (the length prefix keeps `acme` apart from
 * a tenant whose name merely begins with it); other tenants never wait. Under READ COMMITTED each
 * statement after the lock reads a snapshot taken after it, so it sees everything the previous
 * holder committed. Outcomes: `ok`, `too-many-runs` (with `running`), `spent-out` (with figures).
 */
export function reserveFunctionSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_admission_lock(p_tenant text) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('quota-admission:' || octet_length(p_tenant) || ':' || p_tenant, 0));
END
$fn$;

CREATE FUNCTION ${s}.quota_reserve(
  p_tenant text, p_run text, p_max_runs bigint,
  p_hold_period text, p_hold_tokens bigint, p_hold_minor_units bigint,
  p_limit_tokens bigint, p_limit_minor_units bigint, p_at_ms bigint,
  OUT outcome text, OUT running bigint,
  OUT settled_tokens bigint, OUT settled_minor_units bigint,
  OUT reserved_tokens bigint, OUT reserved_minor_units bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_slot_held boolean;
  v_hold_held boolean;
BEGIN
  outcome := 'ok';
  -- Fast path: no concurrency ceiling and no hold leave nothing to decide, so nothing to race.
  IF p_max_runs IS NULL AND p_hold_period IS NULL THEN
    PERFORM ${s}.quota_slot_take(p_tenant, p_run, p_at_ms);
    RETURN;
  END IF;
  PERFORM ${s}.quota_admission_lock(p_tenant);
  -- Point reads only: the slot set's size and the period's figures are counters (decision 16).
  SELECT EXISTS (SELECT 1 FROM ${s}.quota_running WHERE tenant = p_tenant AND run_id = p_run),
         EXISTS (SELECT 1 FROM ${s}.quota_reserved WHERE tenant = p_tenant AND run_id = p_run),
         coalesce((SELECT f.running FROM ${s}.quota_figures f WHERE f.tenant = p_tenant), 0)
    INTO v_slot_held, v_hold_held, running;
  -- A run holding a slot is never counted against the ceiling; compared once, after counting.
  IF NOT v_slot_held AND p_max_runs IS NOT NULL AND running >= p_max_runs THEN
    outcome := 'too-many-runs';
    RETURN;
  END IF;
  -- A run that already holds spend is neither re-checked nor re-held: the existing hold wins.
  IF p_hold_period IS NOT NULL AND NOT v_hold_held THEN
    -- Settled and reserved from one row, so one snapshot (contract §7.1).
    SELECT q.tokens, q.minor_units,
           least(q.held_tokens, 9007199254740991)::bigint, least(q.held_minor_units, 9007199254740991)::bigint
      INTO settled_tokens, settled_minor_units, reserved_tokens, reserved_minor_units
      FROM ${s}.quota_spent q WHERE q.tenant = p_tenant AND q.period = p_hold_period;
    settled_tokens := coalesce(settled_tokens, 0);
    settled_minor_units := coalesce(settled_minor_units, 0);
    reserved_tokens := coalesce(reserved_tokens, 0);
    reserved_minor_units := coalesce(reserved_minor_units, 0);
    IF (p_limit_tokens IS NOT NULL
          AND settled_tokens::numeric + reserved_tokens + p_hold_tokens > p_limit_tokens)
       OR (p_limit_minor_units IS NOT NULL
          AND settled_minor_units::numeric + reserved_minor_units + p_hold_minor_units > p_limit_minor_units) THEN
      outcome := 'spent-out';
      RETURN;
    END IF;
    PERFORM ${s}.quota_hold_put(p_tenant, p_run, p_hold_period, p_hold_tokens, p_hold_minor_units,
                                ${s}.quota_day_of(p_hold_period, p_at_ms));
  END IF;
  PERFORM ${s}.quota_slot_take(p_tenant, p_run, p_at_ms);
END
$fn$;
`;
}
