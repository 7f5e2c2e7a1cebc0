/**
 * The only writers of the running set and of holds (contract §2.1, §2.3) for the quoted schema
 * `s`. Each moves the matching counter in the same transaction (`quota_figures.running`, the
 * `held_*` columns of `quota_spent`; see `postgres-schema.ts`), so a decision reads one row
 * instead of counting a set or summing a period (DESIGN.md decision 16). The slot set stays a
 * set: a slot taken twice is one member and moves the counter once.
 *
 * - `quota_slot_take`: the run joins the set (first admission instant kept); +1 when it was absent.
 * - `quota_slot_give`: the run leaves the set; −1 and `true` when it was a member.
 * - `quota_held_move_counted`: adds amounts of one sign to the hold sums of a hold's month and day.
 * - `quota_hold_put`: a new hold in a period.
 * - `quota_hold_drop`: the hold deleted; answers whether there was one.
 * - `quota_hold_carry`: the hold moved whole to another period (one period loses what the other gains).
 *
 * A hold counts in its month and, when known, its day (`quota_held_move_counted`, DESIGN.md
 * decision 15), so the hold sums of a month include its days' whatever kind was in force.
 *
 * The per-agent counterparts (issue 12) move in the same calls: a slot of an agent's run moves
 * `quota_agent_figures`, a hold of an agent's run the `held_*` of `quota_agent_spent`.
 *
 * The hold row is locked before its period's figures, and a slot before the tenant's figures, the
 * order every caller takes them in.
 */
export function counterFunctionsSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_slot_take(p_tenant text, p_run text, p_at_ms bigint, p_agent text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO ${s}.quota_running (tenant, run_id, admitted_at_ms, agent_name) VALUES (p_tenant, p_run, p_at_ms, p_agent)
    ON CONFLICT (tenant, run_id) DO NOTHING;
  IF FOUND THEN
    INSERT INTO ${s}.quota_figures AS f (tenant, running) VALUES (p_tenant, 1)
      ON CONFLICT (tenant) DO UPDATE SET running = f.running + 1;
    IF p_agent IS NOT NULL THEN
      INSERT INTO ${s}.quota_agent_figures AS a (tenant, agent_name, running) VALUES (p_tenant, p_agent, 1)
        ON CONFLICT (tenant, agent_name) DO UPDATE SET running = a.running + 1;
    END IF;
  END IF;
END
$fn$;

CREATE FUNCTION ${s}.quota_slot_give(p_tenant text, p_run text) RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  v_agent text;
BEGIN
  DELETE FROM ${s}.quota_running WHERE tenant = p_tenant AND run_id = p_run RETURNING agent_name INTO v_agent;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  UPDATE ${s}.quota_figures SET running = running - 1 WHERE tenant = p_tenant;
  IF v_agent IS NOT NULL THEN
    UPDATE ${s}.quota_agent_figures SET running = running - 1 WHERE tenant = p_tenant AND agent_name = v_agent;
  END IF;
  RETURN true;
END
$fn$;

-- The agent's hold sums of one period (issue 12), as quota_held_move_counted moves the tenant's. The
-- tenant's sums bound these (an agent's holds are among the tenant's), so no overflow check here.
CREATE FUNCTION ${s}.quota_agent_held_move(p_tenant text, p_agent text, p_period text, p_tokens numeric, p_minor_units numeric)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
  IF p_agent IS NULL OR (p_tokens = 0 AND p_minor_units = 0) THEN
    RETURN;
  END IF;
  IF p_tokens <= 0 AND p_minor_units <= 0 THEN
    UPDATE ${s}.quota_agent_spent
       SET held_tokens = held_tokens + p_tokens, held_minor_units = held_minor_units + p_minor_units
     WHERE tenant = p_tenant AND agent_name = p_agent AND period = p_period;
    RETURN;
  END IF;
  INSERT INTO ${s}.quota_agent_spent AS q (tenant, agent_name, period, tokens, minor_units, held_tokens, held_minor_units)
    VALUES (p_tenant, p_agent, p_period, 0, 0, p_tokens, p_minor_units)
    ON CONFLICT (tenant, agent_name, period) DO UPDATE SET
      held_tokens = q.held_tokens + excluded.held_tokens,
      held_minor_units = q.held_minor_units + excluded.held_minor_units;
END
$fn$;

-- The UTC day an amount of period p_period counts in when it is held or settled at p_at_ms: the
-- period itself when it is a day, the day of p_at_ms when p_period is its month, else NULL.
CREATE FUNCTION ${s}.quota_day_of(p_period text, p_at_ms bigint) RETURNS text
IMMUTABLE LANGUAGE sql AS $q$
  SELECT CASE
    WHEN length(p_period) = 10 THEN p_period
    WHEN p_at_ms IS NULL OR p_at_ms NOT BETWEEN 0 AND 253402300799999 THEN NULL
    WHEN to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM') = p_period
      THEN to_char(to_timestamp(p_at_ms / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')
  END
$q$;

-- Moves the hold sums of every period a hold of (p_period, p_day) counts in: its month, then its
-- day when known (DESIGN.md decision 15); then the same keys of the agent's sums when the hold is
-- an agent's (issue 12). Tenant month, tenant day, agent month, agent day: the order every caller
-- locks rows in. The amounts have one sign. The tenant's two rows move in one statement: a hold
-- that shrinks or leaves was added to them first, so they exist and are updated in place (an
-- upsert would not do: the domain check is applied to the proposed row before the conflict is
-- found); one that grows is upserted. The holds of a period never sum past 2^53 − 1 (DESIGN.md
-- decision 2): beyond that the call is refused and rolled back whole.
CREATE FUNCTION ${s}.quota_held_move_counted(p_tenant text, p_period text, p_day text, p_tokens numeric, p_minor_units numeric,
  p_agent text DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE
  v_month text := left(p_period, 7);
  v_day text := CASE WHEN length(p_period) = 10 THEN p_period WHEN left(p_day, 7) = p_period THEN p_day END;
  v_row record;
BEGIN
  IF p_tokens = 0 AND p_minor_units = 0 THEN
    RETURN;
  END IF;
  IF p_tokens <= 0 AND p_minor_units <= 0 THEN
    UPDATE ${s}.quota_spent
       SET held_tokens = held_tokens + p_tokens, held_minor_units = held_minor_units + p_minor_units
     WHERE tenant = p_tenant AND period IN (v_month, v_day);
  ELSE
    FOR v_row IN
      INSERT INTO ${s}.quota_spent AS q (tenant, period, tokens, minor_units, held_tokens, held_minor_units)
        SELECT p_tenant, k.period, 0, 0, p_tokens, p_minor_units
          FROM (VALUES (1, v_month), (2, v_day)) AS k(position, period)
         WHERE k.period IS NOT NULL ORDER BY k.position
        ON CONFLICT (tenant, period) DO UPDATE SET
          held_tokens = q.held_tokens + excluded.held_tokens,
          held_minor_units = q.held_minor_units + excluded.held_minor_units
        RETURNING q.period, q.held_tokens, q.held_minor_units
    LOOP
      -- quota_require_fits only when it raises (a call is a statement of its own).
      IF v_row.held_tokens > 9007199254740991 THEN
        PERFORM ${s}.quota_require_fits('hold.tokens', 'the holds of period ' || v_row.period || ' (tokens)',
                                        v_row.held_tokens - greatest(p_tokens, 0), greatest(p_tokens, 0));
      END IF;
      IF v_row.held_minor_units > 9007199254740991 THEN
        PERFORM ${s}.quota_require_fits('hold.minorUnits', 'the holds of period ' || v_row.period || ' (minor units)',
                                        v_row.held_minor_units - greatest(p_minor_units, 0), greatest(p_minor_units, 0));
      END IF;
    END LOOP;
  END IF;
  IF p_agent IS NOT NULL THEN
    PERFORM ${s}.quota_agent_held_move(p_tenant, p_agent, v_month, p_tokens, p_minor_units);
    IF v_day IS NOT NULL THEN
      PERFORM ${s}.quota_agent_held_move(p_tenant, p_agent, v_day, p_tokens, p_minor_units);
    END IF;
  END IF;
END
$fn$;

CREATE FUNCTION ${s}.quota_hold_put(p_tenant text, p_run text, p_period text, p_tokens bigint, p_minor_units bigint,
  p_day text DEFAULT NULL, p_agent text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_day text := CASE WHEN length(p_period) = 10 THEN p_period ELSE p_day END;
BEGIN
  INSERT INTO ${s}.quota_reserved (tenant, run_id, period, day, tokens, minor_units, agent_name)
    VALUES (p_tenant, p_run, p_period, v_day, p_tokens, p_minor_units, p_agent);
  PERFORM ${s}.quota_held_move_counted(p_tenant, p_period, v_day, p_tokens, p_minor_units, p_agent);
END
$fn$;

CREATE FUNCTION ${s}.quota_hold_shrink(p_tenant text, p_run text, p_tokens bigint, p_minor_units bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_old record;
BEGIN
  SELECT period, day, tokens, minor_units, agent_name INTO v_old FROM ${s}.quota_reserved
   WHERE tenant = p_tenant AND run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  UPDATE ${s}.quota_reserved
     SET tokens = greatest(tokens - p_tokens, 0), minor_units = greatest(minor_units - p_minor_units, 0)
   WHERE tenant = p_tenant AND run_id = p_run;
  PERFORM ${s}.quota_held_move_counted(p_tenant, v_old.period, v_old.day,
    greatest(v_old.tokens - p_tokens, 0)::numeric - v_old.tokens,
    greatest(v_old.minor_units - p_minor_units, 0)::numeric - v_old.minor_units, v_old.agent_name);
END
$fn$;

CREATE FUNCTION ${s}.quota_hold_drop(p_tenant text, p_run text) RETURNS boolean
LANGUAGE plpgsql AS $fn$
DECLARE
  v_old record;
BEGIN
  DELETE FROM ${s}.quota_reserved WHERE tenant = p_tenant AND run_id = p_run
    RETURNING period, day, tokens, minor_units, agent_name INTO v_old;
  IF NOT FOUND THEN
    RETURN false;
  END IF;
  PERFORM ${s}.quota_held_move_counted(p_tenant, v_old.period, v_old.day, -v_old.tokens::numeric, -v_old.minor_units::numeric, v_old.agent_name);
  RETURN true;
END
$fn$;

CREATE FUNCTION ${s}.quota_hold_carry(p_tenant text, p_run text, p_period text, p_day text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_old record;
  v_day text;
BEGIN
  SELECT period, day, tokens, minor_units, agent_name INTO v_old FROM ${s}.quota_reserved
   WHERE tenant = p_tenant AND run_id = p_run FOR UPDATE;
  IF NOT FOUND THEN
    RETURN;
  END IF;
  -- The day it now counts in: a day period is its own; else the day given (a resume's), else the
  -- hold's own day when it lies in the new month.
  v_day := CASE WHEN length(p_period) = 10 THEN p_period WHEN p_day IS NOT NULL THEN p_day
                WHEN left(v_old.day, 7) = p_period THEN v_old.day END;
  IF v_old.period = p_period AND v_old.day IS NOT DISTINCT FROM v_day THEN
    RETURN;
  END IF;
  UPDATE ${s}.quota_reserved SET period = p_period, day = v_day WHERE tenant = p_tenant AND run_id = p_run;
  -- Both periods' rows in one (sorted) order, so two carries in opposite directions cannot deadlock.
  IF v_old.period < p_period THEN
    PERFORM ${s}.quota_held_move_counted(p_tenant, v_old.period, v_old.day, -v_old.tokens::numeric, -v_old.minor_units::numeric, v_old.agent_name);
    PERFORM ${s}.quota_held_move_counted(p_tenant, p_period, v_day, v_old.tokens, v_old.minor_units, v_old.agent_name);
  ELSE
    PERFORM ${s}.quota_held_move_counted(p_tenant, p_period, v_day, v_old.tokens, v_old.minor_units, v_old.agent_name);
    PERFORM ${s}.quota_held_move_counted(p_tenant, v_old.period, v_old.day, -v_old.tokens::numeric, -v_old.minor_units::numeric, v_old.agent_name);
  END IF;
END
$fn$;
`;
}
