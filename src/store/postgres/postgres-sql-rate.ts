/**
 * Server-side rate windows (contract §4.4–§4.6, §6.15–§6.16, §7.1) for the quoted schema `s`.
 *
 * `quota_judge_rate` mirrors the pure `checkRate` of `core/`: first, any ceiling whose window is
 * outside 1 … 2 678 400 s answers `uncountable` before anything is counted; then, ceiling by
 * ceiling in list order, the rows strictly after `at − window` (rows stamped in the future
 * count) are counted, and `reached ≥ count` answers `limited`. On a refusal it also returns the
 * instants the TypeScript caller needs to rebuild the refusal value with `checkRate` itself
 * (every row after the widest window's start). Ceilings arrive as two parallel arrays.
 *
 * `quota_reserve_rate` is one serialised transaction per `(tenant, grant)`: an advisory lock on
 * `quota-rate:<len>:<tenant>:<len>:<grant>` with seed 1 (never the admission lock's seed 0), then:
 * a present key answers `present` unjudged and unpruned; otherwise prune that grant's rows at or
 * before the store-wide floor (`at − 2 678 400 s`, never a caller's window: case C38), judge unless
 * exempt, and insert. A refusal returns normally, so the prune commits, as the contract requires.
 */
export function rateFunctionSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_judge_rate(
  p_tenant text, p_grant text, p_counts bigint[], p_windows bigint[], p_at_ms bigint,
  OUT outcome text, OUT instants bigint[])
LANGUAGE plpgsql AS $fn$
DECLARE
  v_n integer := coalesce(array_length(p_windows, 1), 0);
  v_reached bigint;
BEGIN
  outcome := 'ok';
  FOR i IN 1 .. v_n LOOP
    IF p_windows[i] < 1 OR p_windows[i] > 2678400 THEN
      outcome := 'uncountable';
      RETURN;
    END IF;
  END LOOP;
  FOR i IN 1 .. v_n LOOP
    SELECT count(*) INTO v_reached FROM ${s}.quota_rate
     WHERE tenant = p_tenant AND grant_ref = p_grant AND reserved_at_ms > p_at_ms - p_windows[i] * 1000;
    IF v_reached >= p_counts[i] THEN
      outcome := 'limited';
      SELECT coalesce(array_agg(reserved_at_ms), '{}') INTO instants FROM ${s}.quota_rate
       WHERE tenant = p_tenant AND grant_ref = p_grant
         AND reserved_at_ms > p_at_ms - (SELECT max(w) FROM unnest(p_windows) AS w) * 1000;
      RETURN;
    END IF;
  END LOOP;
END
$fn$;

CREATE FUNCTION ${s}.quota_reserve_rate(
  p_tenant text, p_grant text, p_run text, p_dispatch text,
  p_counts bigint[], p_windows bigint[], p_at_ms bigint, p_exempt boolean,
  OUT outcome text, OUT instants bigint[])
LANGUAGE plpgsql AS $fn$
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(
    'quota-rate:' || octet_length(p_tenant) || ':' || p_tenant || ':' || octet_length(p_grant) || ':' || p_grant, 1));
  PERFORM 1 FROM ${s}.quota_rate
   WHERE tenant = p_tenant AND grant_ref = p_grant AND run_id = p_run AND dispatch = p_dispatch;
  IF FOUND THEN
    outcome := 'present';
    RETURN;
  END IF;
  DELETE FROM ${s}.quota_rate
   WHERE tenant = p_tenant AND grant_ref = p_grant AND reserved_at_ms <= p_at_ms - 2678400000;
  outcome := 'ok';
  IF NOT p_exempt THEN
    SELECT j.outcome, j.instants INTO outcome, instants
      FROM ${s}.quota_judge_rate(p_tenant, p_grant, p_counts, p_windows, p_at_ms) j;
    IF outcome <> 'ok' THEN
      RETURN;
    END IF;
  END IF;
  INSERT INTO ${s}.quota_rate (tenant, grant_ref, run_id, dispatch, reserved_at_ms)
    VALUES (p_tenant, p_grant, p_run, p_dispatch, p_at_ms);
END
$fn$;
`;
}
