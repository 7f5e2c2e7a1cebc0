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
BEGIN
  FOR v_key IN
    SELECT DISTINCT hashtextextended('quota-admission:' || octet_length(t.tenant) || ':' || t.tenant, 0) AS k
      FROM (SELECT e.item -> 'args' ->> 0 AS tenant FROM jsonb_array_elements(p_items) AS e(item)) AS t
     ORDER BY k
  LOOP
    PERFORM pg_advisory_xact_lock(v_key);
  END LOOP;
  FOR v_item IN SELECT e.item FROM jsonb_array_elements(p_items) WITH ORDINALITY AS e(item, position) ORDER BY e.position LOOP
    v_args := v_item -> 'args';
    BEGIN
      CASE v_item ->> 'op'
${branches}
        ELSE
          RAISE EXCEPTION 'quotaplane: unknown batched decision %', v_item ->> 'op' USING ERRCODE = 'XX000';
      END CASE;
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
