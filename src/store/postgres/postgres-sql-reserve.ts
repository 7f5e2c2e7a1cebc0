/**
 * Server-side `reserve` (contract §6.2, §7.1) for the quoted schema `s`: one function call, one
 * round trip, one transaction. It mirrors `reserveInTransaction` of the SQLite adapter and the pure
 * `admissionConcurrencyRefusal` and `admissionSpendRefusal` of `core/`: the same fast path, the same order (concurrency
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
 *
 * Issue 12: the run's agent (`p_agent`) and the tenant's ceilings for it, and the stored plane-wide
 * ceiling, read here, cover the admission too. When a plane-wide ceiling covers it, the plane lock
 * (`quota_plane_lock`, seed 3) is taken after the tenant's lock, so the plane-wide counts are exact
 * across every tenant and instance; without one no such lock is taken. The figures of every
 * ceiling judged come back, and TypeScript names the bound with the core functions.
 */
export function reserveFunctionSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_admission_lock(p_tenant text) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('quota-admission:' || octet_length(p_tenant) || ':' || p_tenant, 0));
END
$fn$;

-- The plane lock (issue 12): taken, after the tenant's admission lock, by every admission that a
-- plane-wide ceiling covers, so the plane-wide counts it reads are exact. Seed 3 keeps it apart
-- from the admission (0), rate (1) and migration (2) locks.
CREATE FUNCTION ${s}.quota_plane_lock() RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('quota-plane', 3));
END
$fn$;

CREATE FUNCTION ${s}.quota_reserve(
  p_tenant text, p_run text, p_max_runs bigint,
  p_hold_period text, p_hold_tokens bigint, p_hold_minor_units bigint,
  p_limit_tokens bigint, p_limit_minor_units bigint, p_at_ms bigint,
  p_agent text DEFAULT NULL, p_agent_max_runs bigint DEFAULT NULL,
  p_agent_limit_tokens bigint DEFAULT NULL, p_agent_limit_minor_units bigint DEFAULT NULL,
  OUT outcome text, OUT running bigint,
  OUT settled_tokens bigint, OUT settled_minor_units bigint,
  OUT reserved_tokens bigint, OUT reserved_minor_units bigint,
  OUT agent_running bigint, OUT plane_running bigint, OUT plane_agent_running bigint,
  OUT plane_max_runs bigint, OUT plane_agent_max_runs bigint,
  OUT agent_settled_tokens bigint, OUT agent_settled_minor_units bigint,
  OUT agent_reserved_tokens bigint, OUT agent_reserved_minor_units bigint,
  OUT hold_taken boolean)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_slot_held boolean;
  v_hold_held boolean;
  v_plane jsonb;
BEGIN
  outcome := 'ok';
  -- Whether this call inserted the hold asked for (then it is the run's hold): quota_admit reports
  -- it without reading it back.
  hold_taken := false;
  -- The plane-wide ceilings covering this run (issue 12): the plane's, and the plane's for its agent.
  SELECT p.ceiling_json INTO v_plane FROM ${s}.quota_plane p WHERE p.id = 1;
  plane_max_runs := (v_plane ->> 'maxConcurrentRuns')::numeric::bigint;
  IF p_agent IS NOT NULL THEN
    plane_agent_max_runs := (v_plane -> 'agents' -> p_agent ->> 'maxConcurrentRuns')::numeric::bigint;
  END IF;
  -- A waiting admission's spend probe (postgres-waiters.ts) decides spend with every concurrency
  -- ceiling lifted: the tenant's and the agent's come lifted in its quota, the plane's here.
  IF v_plane IS NOT NULL AND current_setting('quotaplane.spend_probe', true) = 'on' THEN
    plane_max_runs := NULL;
    plane_agent_max_runs := NULL;
  END IF;
  -- Fast path: no concurrency ceiling covering the run and no hold leave nothing to decide.
  IF p_max_runs IS NULL AND p_hold_period IS NULL AND p_agent_max_runs IS NULL
     AND plane_max_runs IS NULL AND plane_agent_max_runs IS NULL THEN
    PERFORM ${s}.quota_slot_take(p_tenant, p_run, p_at_ms, p_agent);
    RETURN;
  END IF;
  -- quota_admission_lock's key, inline (a call is a statement of its own; in a batch it is held already).
  PERFORM pg_advisory_xact_lock(hashtextextended('quota-admission:' || octet_length(p_tenant) || ':' || p_tenant, 0));
  -- Lock order: the tenant's lock, then the plane's (a batch takes all its tenants' locks first).
  IF plane_max_runs IS NOT NULL OR plane_agent_max_runs IS NOT NULL THEN
    PERFORM ${s}.quota_plane_lock();
  END IF;
  -- Point reads only: the slot set's size and the period's figures are counters (decision 16).
  SELECT EXISTS (SELECT 1 FROM ${s}.quota_running WHERE tenant = p_tenant AND run_id = p_run),
         EXISTS (SELECT 1 FROM ${s}.quota_reserved WHERE tenant = p_tenant AND run_id = p_run),
         coalesce((SELECT f.running FROM ${s}.quota_figures f WHERE f.tenant = p_tenant), 0)
    INTO v_slot_held, v_hold_held, running;
  -- A run holding a slot is never counted against a ceiling; each is compared once, after
  -- counting, narrowest first (core admissionConcurrencyRefusal): agent, tenant, plane-agent, plane.
  IF NOT v_slot_held THEN
    IF p_agent IS NOT NULL AND p_agent_max_runs IS NOT NULL THEN
      agent_running := coalesce((SELECT a.running FROM ${s}.quota_agent_figures a
                                  WHERE a.tenant = p_tenant AND a.agent_name = p_agent), 0);
      IF agent_running >= p_agent_max_runs THEN
        outcome := 'too-many-runs';
        RETURN;
      END IF;
    END IF;
    IF p_max_runs IS NOT NULL AND running >= p_max_runs THEN
      outcome := 'too-many-runs';
      RETURN;
    END IF;
    -- Plane-wide counts: sums of the per-tenant counters, read under the plane lock. Every slot a
    -- covered admission takes is taken under that lock; a slot given back meanwhile and not yet
    -- committed is still counted, which errs toward refusing, never beyond the ceiling.
    IF plane_agent_max_runs IS NOT NULL THEN
      plane_agent_running := coalesce((SELECT sum(a.running) FROM ${s}.quota_agent_figures a WHERE a.agent_name = p_agent), 0);
      IF plane_agent_running >= plane_agent_max_runs THEN
        outcome := 'too-many-runs';
        RETURN;
      END IF;
    END IF;
    IF plane_max_runs IS NOT NULL THEN
      plane_running := coalesce((SELECT sum(f.running) FROM ${s}.quota_figures f), 0);
      IF plane_running >= plane_max_runs THEN
        outcome := 'too-many-runs';
        RETURN;
      END IF;
    END IF;
  END IF;
  -- A run that already holds spend is neither re-checked nor re-held: the existing hold wins.
  IF p_hold_period IS NOT NULL AND NOT v_hold_held THEN
    -- The agent's figures first (core admissionSpendRefusal), from one row, so one snapshot.
    IF p_agent IS NOT NULL AND (p_agent_limit_tokens IS NOT NULL OR p_agent_limit_minor_units IS NOT NULL) THEN
      SELECT q.tokens, q.minor_units,
             least(q.held_tokens, 9007199254740991)::bigint, least(q.held_minor_units, 9007199254740991)::bigint
        INTO agent_settled_tokens, agent_settled_minor_units, agent_reserved_tokens, agent_reserved_minor_units
        FROM ${s}.quota_agent_spent q WHERE q.tenant = p_tenant AND q.agent_name = p_agent AND q.period = p_hold_period;
      agent_settled_tokens := coalesce(agent_settled_tokens, 0);
      agent_settled_minor_units := coalesce(agent_settled_minor_units, 0);
      agent_reserved_tokens := coalesce(agent_reserved_tokens, 0);
      agent_reserved_minor_units := coalesce(agent_reserved_minor_units, 0);
      IF (p_agent_limit_tokens IS NOT NULL
            AND agent_settled_tokens::numeric + agent_reserved_tokens + p_hold_tokens > p_agent_limit_tokens)
         OR (p_agent_limit_minor_units IS NOT NULL
            AND agent_settled_minor_units::numeric + agent_reserved_minor_units + p_hold_minor_units > p_agent_limit_minor_units) THEN
        outcome := 'spent-out';
        RETURN;
      END IF;
    END IF;
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
                                ${s}.quota_day_of(p_hold_period, p_at_ms), p_agent);
    hold_taken := true;
  END IF;
  PERFORM ${s}.quota_slot_take(p_tenant, p_run, p_at_ms, p_agent);
END
$fn$;
`;
}
