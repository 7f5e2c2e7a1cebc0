/**
 * Server-side `settle` (contract §6.11, §7.1) for the quoted schema `s`, mirroring
 * `settleInTransaction` of the SQLite adapter in one function call. A pass's own settle
 * (`quota_settle_pass`) keeps its receipt in the pass row; this one writes `quota_settled`, so it
 * first looks at the pass row with the run locked (the pass's settle locks it too, so the two take
 * turns). Its receipt goes in with `ON CONFLICT DO NOTHING`: a concurrent settle of the same pass
 * waits for the first to commit and then finds its receipt. A receipt found either way answers
 * `already-settled` when identical in all five payload fields, anything else `conflict` (the
 * caller throws `CONFLICT`); both changed nothing. Otherwise `quota_receipt_apply` applies it once:
 * the hold shrinks by the spend floored at 0 (or goes when concluding), the spend accrues to its
 * period with `quota_accrue`, which refuses (SQLSTATE QP001, the whole call rolled back) a total
 * beyond 2^53 − 1, and to the agent's books for a registered run of an agent (`quota_agent_spent`,
 * issue 12), and the slot is released when asked. Settlement takes no advisory lock: it moves spend
 * from a hold to the settled total inside one transaction, so any one-statement snapshot sees
 * consistent totals.
 */
export function settleFunctionSql(s: string): string {
  return `
-- Adds a settle's spend to the settled totals of its month and, when known, its day (p_day, NULL
-- otherwise), refusing a total beyond 2^53 − 1 before anything is written: both rows are read and
-- locked in one statement (month first), checked in that order, then moved in one statement.
CREATE FUNCTION ${s}.quota_accrue(p_tenant text, p_month text, p_day text, p_tokens bigint, p_minor_units bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_spent record;
BEGIN
  FOR v_spent IN
    SELECT q.period, q.tokens, q.minor_units FROM ${s}.quota_spent q
     WHERE q.tenant = p_tenant AND q.period IN (p_month, p_day) ORDER BY q.period FOR UPDATE
  LOOP
    -- quota_require_fits only when it raises (a call is a statement of its own).
    IF v_spent.tokens::numeric + p_tokens > 9007199254740991 THEN
      PERFORM ${s}.quota_require_fits('spend.tokens', 'the settled spend of period ' || v_spent.period || ' (tokens)',
                                      v_spent.tokens, p_tokens);
    END IF;
    IF v_spent.minor_units::numeric + p_minor_units > 9007199254740991 THEN
      PERFORM ${s}.quota_require_fits('spend.minorUnits', 'the settled spend of period ' || v_spent.period || ' (minor units)',
                                      v_spent.minor_units, p_minor_units);
    END IF;
  END LOOP;
  INSERT INTO ${s}.quota_spent AS q (tenant, period, tokens, minor_units)
    SELECT p_tenant, k.period, p_tokens, p_minor_units
      FROM (VALUES (1, p_month), (2, p_day)) AS k(position, period)
     WHERE k.period IS NOT NULL ORDER BY k.position
    ON CONFLICT (tenant, period) DO UPDATE SET
      tokens = q.tokens + excluded.tokens, minor_units = q.minor_units + excluded.minor_units;
END
$fn$;

-- Adds a settle's spend to one agent's settled total of one period (issue 12). The tenant's total,
-- accrued first by quota_accrue, bounds it (the agent's spend is part of it), so no check here.
CREATE FUNCTION ${s}.quota_agent_accrue(p_tenant text, p_agent text, p_period text, p_tokens bigint, p_minor_units bigint) RETURNS void
LANGUAGE plpgsql AS $fn$
BEGIN
  INSERT INTO ${s}.quota_agent_spent AS q (tenant, agent_name, period, tokens, minor_units)
    VALUES (p_tenant, p_agent, p_period, p_tokens, p_minor_units)
    ON CONFLICT (tenant, agent_name, period) DO UPDATE SET
      tokens = q.tokens + excluded.tokens, minor_units = q.minor_units + excluded.minor_units;
END
$fn$;

-- What a new receipt does to the books (contract §6.11), for quota_settle and quota_settle_pass:
-- shrink the hold by the spend floored at 0 (or delete it when concluding), accrue the spend to its
-- period's month and, when known, its day (quota_accrue refuses a total beyond 2^53 − 1), and to the
-- agent's books for a run of an agent (p_agent, issue 12), then release the slot when asked. The
-- hold moves before the period's settled total, so its row is locked before the period's.
CREATE FUNCTION ${s}.quota_receipt_apply(
  p_tenant text, p_run text, p_period text, p_day text, p_tokens bigint, p_minor_units bigint,
  p_release_slot boolean, p_concludes boolean, p_agent text) RETURNS void
LANGUAGE plpgsql AS $fn$
DECLARE
  v_day text := CASE WHEN length(p_period) = 10 THEN p_period WHEN left(p_day, 7) = p_period THEN p_day END;
BEGIN
  IF p_concludes THEN
    PERFORM ${s}.quota_hold_drop(p_tenant, p_run);
  ELSE
    PERFORM ${s}.quota_hold_shrink(p_tenant, p_run, p_tokens, p_minor_units);
  END IF;
  -- What a day settled also counts in its month (DESIGN.md decision 15): month row first, then the day's.
  IF p_period IS NOT NULL THEN
    PERFORM ${s}.quota_accrue(p_tenant, left(p_period, 7), v_day, p_tokens, p_minor_units);
    IF p_agent IS NOT NULL THEN
      PERFORM ${s}.quota_agent_accrue(p_tenant, p_agent, left(p_period, 7), p_tokens, p_minor_units);
      IF v_day IS NOT NULL THEN
        PERFORM ${s}.quota_agent_accrue(p_tenant, p_agent, v_day, p_tokens, p_minor_units);
      END IF;
    END IF;
  END IF;
  IF p_release_slot THEN
    PERFORM ${s}.quota_slot_give(p_tenant, p_run);
  END IF;
END
$fn$;

-- Whether a stored receipt (p_stored_*) carries the payload of a settle asking again (contract
-- §6.11): all five fields the same, the period NULL on both counting as the same. Every settle
-- answers a retry with it, wherever the receipt is kept (a plain SQL function the planner inlines).
CREATE FUNCTION ${s}.quota_same_receipt(
  p_period text, p_tokens bigint, p_minor_units bigint, p_release_slot boolean, p_concludes boolean,
  p_stored_period text, p_stored_tokens bigint, p_stored_minor_units bigint, p_stored_release_slot boolean,
  p_stored_concludes boolean) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $q$
  SELECT p_stored_period IS NOT DISTINCT FROM p_period AND p_stored_tokens = p_tokens AND p_stored_minor_units = p_minor_units
     AND p_stored_release_slot = p_release_slot AND p_stored_concludes = p_concludes
$q$;

CREATE FUNCTION ${s}.quota_settle(
  p_tenant text, p_run text, p_epoch bigint, p_period text,
  p_tokens bigint, p_minor_units bigint, p_release_slot boolean, p_concludes boolean, p_day text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_same boolean;
  v_agent text;
  v_pass_period text;
  v_pass_takes_slot boolean;
  v_own_tokens bigint;
  v_own_minor_units bigint;
  v_own_concludes boolean;
BEGIN
  -- A receipt a prune removed is never written again as if new (issue 9 fault 6).
  IF EXISTS (SELECT 1 FROM ${s}.quota_pruned x WHERE x.tenant = p_tenant AND x.run_id = p_run) THEN
    RETURN 'pruned';
  END IF;
  -- A registered run is locked first, as quota_settle_pass locks it, so this settle and the pass's
  -- own settle of the same pass take turns, and the later one finds the earlier one's receipt.
  SELECT r.agent_name INTO v_agent FROM ${s}.quota_runs r WHERE r.tenant = p_tenant AND r.run_id = p_run FOR UPDATE;
  -- The pass is read by a statement of its own, after the lock. Had it been joined to the locking
  -- read, a wait for the lock would hand back the run row as committed meanwhile but the pass row
  -- as it stood when that read began: the receipt the lock holder just wrote would be missed, and
  -- the pass settled twice.
  IF FOUND THEN
    SELECT p.period, p.takes_slot, p.receipt_tokens, p.receipt_minor_units, p.receipt_concludes
      INTO v_pass_period, v_pass_takes_slot, v_own_tokens, v_own_minor_units, v_own_concludes
      FROM ${s}.quota_passes p WHERE p.tenant = p_tenant AND p.run_id = p_run AND p.epoch = p_epoch;
  END IF;
  IF v_own_tokens IS NOT NULL THEN
    RETURN CASE WHEN ${s}.quota_same_receipt(p_period, p_tokens, p_minor_units, p_release_slot, p_concludes,
                       v_pass_period, v_own_tokens, v_own_minor_units, v_pass_takes_slot, v_own_concludes)
                THEN 'already-settled' ELSE 'conflict' END;
  END IF;
  INSERT INTO ${s}.quota_settled (tenant, run_id, epoch, period, tokens, minor_units, release_slot, concludes)
    VALUES (p_tenant, p_run, p_epoch, p_period, p_tokens, p_minor_units, p_release_slot, p_concludes)
    ON CONFLICT (tenant, run_id, epoch) DO NOTHING;
  IF NOT FOUND THEN
    SELECT ${s}.quota_same_receipt(p_period, p_tokens, p_minor_units, p_release_slot, p_concludes,
                                   r.period, r.tokens, r.minor_units, r.release_slot, r.concludes)
      INTO v_same
      FROM ${s}.quota_settled r WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.epoch = p_epoch;
    RETURN CASE WHEN v_same THEN 'already-settled' ELSE 'conflict' END;
  END IF;
  PERFORM ${s}.quota_receipt_apply(p_tenant, p_run, p_period, p_day, p_tokens, p_minor_units, p_release_slot, p_concludes, v_agent);
  RETURN 'settled';
END
$fn$;
`;
}
