import { BATCHED_DECISIONS } from './postgres-batch-ops.js';

/**
 * `quota_batch(items jsonb) → jsonb` for the quoted schema `s`: several decisions of one store
 * instance in one round trip and one transaction (DESIGN.md decision 16, issue #8). `items` is an
 * array of `{"op": <decision>, "args": [...]}` (see `postgres-batch-ops.ts`); the answer is an
 * array in the same order, each `{"ok": <the function's row as JSON>}` or
 * `{"error": {"code": <SQLSTATE>, "message": …}}`.
 *
 * First, the admission lock (`quota_admission_lock`, seed 0) of every tenant in the batch is taken
 * in ascending key order. Every row quotaplane writes is keyed by tenant, so while a batch holds
 * its tenants' locks no other batch can touch those tenants' rows: two batches never wait for each
 * other's row locks in opposite orders, and the one lock order makes their advisory waits acyclic.
 * A wait longer than `lock_timeout` fails the whole batch.
 *
 * An item asked without an instant of its own carries `"wait": {"at", "month"?, "day"?, "askedMs",
 * "maxMs"}` (DESIGN.md decision 23): its instant argument (index `at`) is the plane's clock as the
 * batch was sent, and the time this batch waited for the tenant locks, measured here in whole ms,
 * is added to it (only a lock another transaction holds is waited for and measured, so an
 * uncontended batch adds 0; with the period keys at `month` and `day` derived again), so the decision is
 * recorded at the instant it is applied. One that has waited longer than `maxMs` since it was
 * asked (`askedMs`) is not applied: it raises SQLSTATE QPW01 (DETAIL the ms waited, HINT the
 * bound), answered as its own error like any other. Its row gets `applied_at_ms`, the instant used.
 *
 * Then each decision runs in its own subtransaction (a BEGIN … EXCEPTION block): one that raises is
 * rolled back alone, with its SQLSTATE reported for its caller, and the others go on. A
 * cancellation (statement timeout) or a fault at commit fails the whole statement, and nothing in
 * it commits. Keep batches within PostgreSQL's per-backend subtransaction cache (64).
 */
export function batchFunctionSql(s: string): string {
  const branches = Object.entries(BATCHED_DECISIONS)
    .map(([op, spec]) => {
      const args = spec.types
        .map((type, index) =>
          type.endsWith('[]')
            ? `ARRAY(SELECT jsonb_array_elements_text(coalesce(v_args -> ${index}, '[]'::jsonb)))::${type}`
            : `(v_args ->> ${index})::${type}`,
        )
        .join(',\n            ');
      const call = `${s}.${spec.fn}(\n            ${args})`;
      const select =
        'scalar' in spec
          ? `v_row := jsonb_build_object('${spec.scalar}', ${call});`
          : `v_row := to_jsonb(${call});`;
      return `        WHEN '${op}' THEN\n          ${select}`;
    })
    .join('\n');
  return `
CREATE FUNCTION ${s}.quota_batch(p_items jsonb) RETURNS jsonb
LANGUAGE plpgsql AS $fn$
DECLARE
  v_key bigint;
  v_item jsonb;
  v_args jsonb;
  v_row jsonb;
  v_state text;
  v_message text;
  v_detail text;
  v_hint text;
  v_results jsonb := '[]'::jsonb;
  v_lock_started timestamptz;
  v_lock_waited interval := interval '0';
  v_lock_wait_ms bigint;
  v_wait jsonb;
  v_at bigint;
BEGIN
  FOR v_key IN
    SELECT DISTINCT hashtextextended('quota-admission:' || octet_length(t.tenant) || ':' || t.tenant, 0) AS k
      FROM (SELECT e.item -> 'args' ->> 0 AS tenant FROM jsonb_array_elements(p_items) AS e(item)) AS t
     ORDER BY k
  LOOP
    -- Only a lock another transaction holds is waited for, and only that wait is measured: an
    -- uncontended batch adds exactly 0 ms to its decisions' instants.
    IF NOT pg_try_advisory_xact_lock(v_key) THEN
      v_lock_started := clock_timestamp();
      PERFORM pg_advisory_xact_lock(v_key);
      v_lock_waited := v_lock_waited + (clock_timestamp() - v_lock_started);
    END IF;
  END LOOP;
  v_lock_wait_ms := floor(extract(epoch FROM v_lock_waited) * 1000)::bigint;
  FOR v_item IN SELECT e.item FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(item, position) ORDER BY e.position LOOP
    v_args := v_item -> 'args';
    v_wait := v_item -> 'wait';
    BEGIN
      IF v_wait IS NOT NULL THEN
        v_at := (v_args ->> (v_wait ->> 'at')::int)::bigint + v_lock_wait_ms;
        IF v_at - (v_wait ->> 'askedMs')::bigint > (v_wait ->> 'maxMs')::bigint THEN
          RAISE EXCEPTION 'quotaplane: the decision waited longer than its bound' USING ERRCODE = 'QPW01',
            DETAIL = (v_at - (v_wait ->> 'askedMs')::bigint)::text, HINT = v_wait ->> 'maxMs';
        END IF;
        IF v_lock_wait_ms > 0 THEN
          v_args := jsonb_set(v_args, ARRAY[v_wait ->> 'at'], to_jsonb(v_at));
          IF v_wait ? 'month' THEN
            v_args := jsonb_set(v_args, ARRAY[v_wait ->> 'month'], to_jsonb(to_char(to_timestamp(v_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM')));
          END IF;
          IF v_wait ? 'day' THEN
            v_args := jsonb_set(v_args, ARRAY[v_wait ->> 'day'], to_jsonb(to_char(to_timestamp(v_at / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD')));
          END IF;
        END IF;
      END IF;
      CASE v_item ->> 'op'
${branches}
        ELSE
          RAISE EXCEPTION 'quotaplane: unknown batched decision %', v_item ->> 'op' USING ERRCODE = 'XX000';
      END CASE;
      IF v_wait IS NOT NULL AND jsonb_typeof(v_row) = 'object' THEN
        v_row := v_row || jsonb_build_object('applied_at_ms', v_at);
      END IF;
      v_results := v_results || jsonb_build_array(jsonb_build_object('ok', v_row));
    EXCEPTION WHEN OTHERS THEN
      GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE, v_message = MESSAGE_TEXT,
        v_detail = PG_EXCEPTION_DETAIL, v_hint = PG_EXCEPTION_HINT;
      v_results := v_results || jsonb_build_array(jsonb_build_object('error',
        jsonb_build_object('code', v_state, 'message', v_message, 'detail', v_detail, 'hint', v_hint)));
    END;
  END LOOP;
  RETURN v_results;
END
$fn$;
`;
}
