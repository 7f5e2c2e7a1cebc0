/**
 * Server-side `settle` (contract §6.11, §7.1) for the quoted schema `s`, mirroring
 * `settleInTransaction` of the SQLite adapter in one function call. The receipt goes in with
 * `ON CONFLICT DO NOTHING`: a concurrent settle of the same pass waits for the first to commit and
 * then finds its receipt. Nothing inserted means a receipt exists: identical in all five payload
 * fields answers `already-settled`, anything else answers `conflict` (the caller throws
 * `CONFLICT`); both changed nothing. Otherwise the receipt is applied once: accrue to its period
 * as a `numeric` add clamped to 2^53 − 1 (adding BIGINTs could overflow before any clamp), shrink
 * the hold by the spend floored at 0 (or delete it when concluding), release the slot when asked.
 * The hold moves before the period's settled total, so its row is locked before the period's.
 * Settlement takes no advisory lock: it moves spend from a hold to the settled total inside one
 * transaction, so any one-statement snapshot sees consistent totals.
 */
export function settleFunctionSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_settle(
  p_tenant text, p_run text, p_epoch bigint, p_period text,
  p_tokens bigint, p_minor_units bigint, p_release_slot boolean, p_concludes boolean)
RETURNS text
LANGUAGE plpgsql AS $fn$
DECLARE
  v_same boolean;
BEGIN
  INSERT INTO ${s}.quota_settled (tenant, run_id, epoch, period, tokens, minor_units, release_slot, concludes)
    VALUES (p_tenant, p_run, p_epoch, p_period, p_tokens, p_minor_units, p_release_slot, p_concludes)
    ON CONFLICT (tenant, run_id, epoch) DO NOTHING;
  IF NOT FOUND THEN
    SELECT r.period IS NOT DISTINCT FROM p_period AND r.tokens = p_tokens AND r.minor_units = p_minor_units
           AND r.release_slot = p_release_slot AND r.concludes = p_concludes
      INTO v_same
      FROM ${s}.quota_settled r WHERE r.tenant = p_tenant AND r.run_id = p_run AND r.epoch = p_epoch;
    RETURN CASE WHEN v_same THEN 'already-settled' ELSE 'conflict' END;
  END IF;
  IF p_concludes THEN
    PERFORM ${s}.quota_hold_drop(p_tenant, p_run);
  ELSE
    PERFORM ${s}.quota_hold_shrink(p_tenant, p_run, p_tokens, p_minor_units);
  END IF;
  IF p_period IS NOT NULL THEN
    INSERT INTO ${s}.quota_spent AS q (tenant, period, tokens, minor_units)
      VALUES (p_tenant, p_period, p_tokens, p_minor_units)
      ON CONFLICT (tenant, period) DO UPDATE SET
        tokens = least(q.tokens::numeric + excluded.tokens, 9007199254740991)::bigint,
        minor_units = least(q.minor_units::numeric + excluded.minor_units, 9007199254740991)::bigint;
  END IF;
  IF p_release_slot THEN
    PERFORM ${s}.quota_slot_give(p_tenant, p_run);
  END IF;
  RETURN 'settled';
END
$fn$;
`;
}
