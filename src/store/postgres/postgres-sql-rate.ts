/**
 * Server-side rate windows (contract §4.4–§4.6, §6.15–§6.16, §7.1) for the quoted schema `s`, over
 * numbered dispatches (issue #8 item 7, DESIGN.md decision 16): each dispatch of a
 * `(tenant, grant)` gets the next ordinal and is recorded at `max(atMs, the grant's latest recorded
 * instant)`, so recorded instants grow with the ordinal and a window always counts the newest
 * dispatches. A decision then reads one row per ceiling, whatever the window holds.
 *
 * `quota_judge_rate` mirrors `judgeRateBoundaries` and `countedSince` of `core/` (and so the
 * answers of `checkRate` over the recorded instants): first, any ceiling whose window is outside
 * 1 … 2 678 400 s answers `uncountable` (with its 1-based `ceiling_index`) before anything is
 * read; then a ceiling of `count` C and window W is full when C is 0, or the dispatch numbered
 * `latest − C + 1` is stored and recorded strictly after `at − W × 1000` (a row counts when its
 * instant is greater; future rows count). The first full ceiling in list order answers `limited`
 * with `reached` (its window's true count: one index seek for the oldest dispatch it counts) and
 * `retry_at_ms`, the latest over every full ceiling of the instant its deciding dispatch leaves
 * (`boundary + W × 1000`; `at + W × 1000` for a count of 0), never before `at`.
 *
 * `quota_reserve_rate` is one serialised transaction per `(tenant, grant)`: an advisory lock on
 * `quota-rate:<len>:<tenant>:<len>:<grant>` with seed 1 (never the admission lock's seed 0), then:
 * a present key answers `present` unjudged and unpruned; otherwise prune that grant's rows at or
 * before the store-wide floor (`at − 2 678 400 s`, never a caller's window: case C38; the grant's
 * counter row stays), judge unless exempt, and record the dispatch under the next ordinal. A
 * refusal returns normally, so the prune commits, as the contract requires.
 */
export function rateFunctionSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_judge_rate(
  p_tenant text, p_grant text, p_counts bigint[], p_windows bigint[], p_at_ms bigint,
  OUT outcome text, OUT ceiling_index integer, OUT reached bigint, OUT retry_at_ms bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_n integer := coalesce(array_length(p_windows, 1), 0);
  v_latest bigint;
  v_boundary bigint;
  v_first bigint;
  v_window_ms bigint;
BEGIN
  outcome := 'ok';
  FOR i IN 1 .. v_n LOOP
    IF p_windows[i] < 1 OR p_windows[i] > 2678400 THEN
      outcome := 'uncountable';
      ceiling_index := i;
      RETURN;
    END IF;
  END LOOP;
  IF v_n = 0 THEN
    RETURN;
  END IF;
  SELECT g.last_ordinal INTO v_latest FROM ${s}.quota_rate_grants g WHERE g.tenant = p_tenant AND g.grant_ref = p_grant;
  v_latest := coalesce(v_latest, 0);
  retry_at_ms := p_at_ms;
  FOR i IN 1 .. v_n LOOP
    v_window_ms := p_windows[i] * 1000;
    v_boundary := NULL;
    IF p_counts[i] = 0 THEN
      IF ceiling_index IS NULL THEN ceiling_index := i; END IF;
      retry_at_ms := greatest(retry_at_ms, p_at_ms + v_window_ms);
      CONTINUE;
    END IF;
    IF v_latest - p_counts[i] + 1 >= 1 THEN
      SELECT r.reserved_at_ms INTO v_boundary FROM ${s}.quota_rate r
       WHERE r.tenant = p_tenant AND r.grant_ref = p_grant AND r.ordinal = v_latest - p_counts[i] + 1;
    END IF;
    IF v_boundary IS NOT NULL AND v_boundary > p_at_ms - v_window_ms THEN
      IF ceiling_index IS NULL THEN ceiling_index := i; END IF;
      retry_at_ms := greatest(retry_at_ms, v_boundary + v_window_ms);
    END IF;
  END LOOP;
  IF ceiling_index IS NULL THEN
    retry_at_ms := NULL;
    RETURN;
  END IF;
  outcome := 'limited';
  SELECT r.ordinal INTO v_first FROM ${s}.quota_rate r
   WHERE r.tenant = p_tenant AND r.grant_ref = p_grant AND r.reserved_at_ms > p_at_ms - p_windows[ceiling_index] * 1000
   ORDER BY r.reserved_at_ms, r.ordinal LIMIT 1;
  reached := CASE WHEN v_first IS NULL THEN 0 ELSE v_latest - v_first + 1 END;
END
$fn$;

CREATE FUNCTION ${s}.quota_reserve_rate(
  p_tenant text, p_grant text, p_run text, p_dispatch text,
  p_counts bigint[], p_windows bigint[], p_at_ms bigint, p_exempt boolean,
  OUT outcome text, OUT ceiling_index integer, OUT reached bigint, OUT retry_at_ms bigint)
LANGUAGE plpgsql AS $fn$
DECLARE
  v_last_ordinal bigint;
  v_last_at_ms bigint;
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
    SELECT j.outcome, j.ceiling_index, j.reached, j.retry_at_ms INTO outcome, ceiling_index, reached, retry_at_ms
      FROM ${s}.quota_judge_rate(p_tenant, p_grant, p_counts, p_windows, p_at_ms) j;
    IF outcome <> 'ok' THEN
      RETURN;
    END IF;
  END IF;
  SELECT g.last_ordinal, g.last_at_ms INTO v_last_ordinal, v_last_at_ms
    FROM ${s}.quota_rate_grants g WHERE g.tenant = p_tenant AND g.grant_ref = p_grant;
  v_last_ordinal := coalesce(v_last_ordinal, 0) + 1;
  v_last_at_ms := greatest(p_at_ms, coalesce(v_last_at_ms, p_at_ms));
  INSERT INTO ${s}.quota_rate (tenant, grant_ref, ordinal, run_id, dispatch, reserved_at_ms)
    VALUES (p_tenant, p_grant, v_last_ordinal, p_run, p_dispatch, v_last_at_ms);
  INSERT INTO ${s}.quota_rate_grants AS g (tenant, grant_ref, last_ordinal, last_at_ms)
    VALUES (p_tenant, p_grant, v_last_ordinal, v_last_at_ms)
    ON CONFLICT (tenant, grant_ref) DO UPDATE SET last_ordinal = excluded.last_ordinal, last_at_ms = excluded.last_at_ms;
END
$fn$;
`;
}
