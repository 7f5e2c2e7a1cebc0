import { METER_COLUMNS, RESERVATION_COLUMNS } from '../call-rows.js';

// The statements of the PostgreSQL model-call books (postgres-call-books.ts), on the tables of
// migrations/0006_model_calls.sql. A decision's facts are read by one statement that takes what it
// wants as one JSONB document and answers one row of JSONB columns; its writes are one statement
// per table, each over every row the decision changed.

const METER_LIST = METER_COLUMNS.split(', ');
const RESERVATION_TYPES: Record<string, string> = {
  call_id: 'text',
  model: 'text',
  agent: 'text',
  end_user: 'text',
  subjects_json: 'jsonb',
  status: 'text',
  estimated: 'boolean',
};
const RESERVATION_LIST = RESERVATION_COLUMNS.split(', ');

/** The statements of the model-call books of the schema `s` (quoted). */
export function postgresCallQueries(s: string) {
  const tenantOf = '(SELECT w.j->>\'tenant\' FROM w)';
  const list = (key: string) => `coalesce((SELECT w.j->'${key}' FROM w), '[]'::jsonb)`;
  return {
    /**
     * The tenant's model-call lock: every decision on its books, and its deletion, hold it until they
     * commit. Seed 5 and its own key prefix keep it apart from the admission (0), migration (2),
     * audit and plane (3) and first-key (4) locks. `$1` once, so it can open a transaction (`tx.opening`).
     */
    lock: `SELECT pg_advisory_xact_lock(hashtextextended('${s}.quota-calls:' || octet_length(p.t) || ':' || p.t, 5)) FROM (SELECT $1::text AS t) p`,

    /**
     * The facts named by `$1` (see `CallWant` in postgres-call-books.ts): the tenant's ceilings, its
     * first `allMeters` meters in subject order and the meters of `meters`, the reservations of
     * `calls`, its first `head` open reservations by deadline, the newest usage row at or before
     * each of `atOrBefore`, and the first row reaching each of `reaching`.
     */
    load: `WITH w AS (SELECT $1::jsonb AS j)
SELECT
  (SELECT c.ceilings_json FROM ${s}.quota_call_ceilings c WHERE c.tenant = ${tenantOf}) AS ceilings,
  (SELECT coalesce(jsonb_agg(to_jsonb(m) ORDER BY m.subject), '[]'::jsonb) FROM (
     SELECT subject, ${METER_COLUMNS} FROM ${s}.quota_call_meters WHERE tenant = ${tenantOf}
     ORDER BY subject LIMIT coalesce((SELECT (w.j->>'allMeters')::bigint FROM w), 0)) m) AS all_meters,
  (SELECT coalesce(jsonb_agg(to_jsonb(m)), '[]'::jsonb) FROM (
     SELECT subject, ${METER_COLUMNS} FROM ${s}.quota_call_meters WHERE tenant = ${tenantOf}
     AND subject = ANY (ARRAY(SELECT jsonb_array_elements_text(${list('meters')})))) m) AS meters,
  (SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]'::jsonb) FROM (
     SELECT ${RESERVATION_COLUMNS} FROM ${s}.quota_call_reservations WHERE tenant = ${tenantOf}
     AND call_id = ANY (ARRAY(SELECT jsonb_array_elements_text(${list('calls')})))) r) AS calls,
  (SELECT coalesce(jsonb_agg(to_jsonb(r) ORDER BY r.deadline_ms, r.call_id), '[]'::jsonb) FROM (
     SELECT ${RESERVATION_COLUMNS} FROM ${s}.quota_call_reservations WHERE tenant = ${tenantOf} AND status = 'open'
     ORDER BY deadline_ms, call_id LIMIT coalesce((SELECT (w.j->>'head')::bigint FROM w), 0)) r) AS head,
  (SELECT coalesce(jsonb_agg(jsonb_build_object('subject', a.subject, 'atMs', a."atMs", 'row', (
     SELECT to_jsonb(u) FROM (SELECT at_ms, tokens, requests, minor_units FROM ${s}.quota_call_usage
       WHERE tenant = ${tenantOf} AND subject = a.subject AND at_ms <= a."atMs" ORDER BY at_ms DESC LIMIT 1) u))), '[]'::jsonb)
   FROM jsonb_to_recordset(${list('atOrBefore')}) AS a(subject text, "atMs" bigint)) AS at_or_before,
  (SELECT coalesce(jsonb_agg(jsonb_build_object('subject', f.subject, 'unit', f.unit, 'amount', f.amount, 'afterMs', f."afterMs", 'atMs', (
     SELECT u.at_ms FROM ${s}.quota_call_usage u WHERE u.tenant = ${tenantOf} AND u.subject = f.subject AND u.at_ms > f."afterMs"
       AND (CASE f.unit WHEN 'tokens' THEN u.tokens WHEN 'requests' THEN u.requests ELSE u.minor_units END) >= f.amount
       ORDER BY u.at_ms LIMIT 1))), '[]'::jsonb)
   FROM jsonb_to_recordset(${list('reaching')}) AS f(subject text, unit text, amount numeric, "afterMs" bigint)) AS reaching`,

    /** Deletes usage rows: `$2` subjects, each through its `$3` instant. */
    pruneUsage: `DELETE FROM ${s}.quota_call_usage u USING unnest($2::text[], $3::bigint[]) AS p(subject, through_ms)
  WHERE u.tenant = $1 AND u.subject = p.subject AND u.at_ms <= p.through_ms`,
    /** Stores usage rows, one per element of `$2`–`$6`. */
    upsertUsage: `INSERT INTO ${s}.quota_call_usage (tenant, subject, at_ms, tokens, requests, minor_units)
  SELECT $1, x.* FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[]) AS x
  ON CONFLICT (tenant, subject, at_ms) DO UPDATE SET tokens = excluded.tokens, requests = excluded.requests, minor_units = excluded.minor_units`,
    /** Stores meters, one per element of `$2` (subjects) and the arrays after it, in the order of the meter columns. */
    upsertMeters: `INSERT INTO ${s}.quota_call_meters (tenant, subject, ${METER_COLUMNS})
  SELECT $1, x.* FROM unnest($2::text[], ${METER_LIST.map((_, i) => `$${i + 3}::bigint[]`).join(', ')}) AS x
  ON CONFLICT (tenant, subject) DO UPDATE SET ${METER_LIST.map((c) => `${c} = excluded.${c}`).join(', ')}`,
    /** Deletes the tenant's ended reservations that closed at or before `$2`. */
    pruneClosed: `DELETE FROM ${s}.quota_call_reservations WHERE tenant = $1 AND status <> 'open' AND closed_at_ms <= $2`,
    /** Deletes the reservations of `$2` (call ids). */
    deleteCalls: `DELETE FROM ${s}.quota_call_reservations WHERE tenant = $1 AND call_id = ANY ($2::text[])`,
    /**
     * Stores reservations: `$1` is `{ tenant, rows }`, the rows named by their columns (`$1` once, so
     * it can close the transaction: `tx.closing`).
     */
    upsertCalls: `INSERT INTO ${s}.quota_call_reservations (tenant, ${RESERVATION_COLUMNS})
  SELECT w.j->>'tenant', r.* FROM (SELECT $1::jsonb AS j) w, jsonb_to_recordset(w.j->'rows') AS r(${RESERVATION_LIST.map((c) => `${c} ${RESERVATION_TYPES[c] ?? 'bigint'}`).join(', ')})
  ON CONFLICT (tenant, call_id) DO UPDATE SET ${RESERVATION_LIST.filter((c) => c !== 'call_id').map((c) => `${c} = excluded.${c}`).join(', ')}`,

    // Plain reads and writes outside decisions.
    selectCeilings: `SELECT ceilings_json FROM ${s}.quota_call_ceilings WHERE tenant = $1`,
    upsertCeilings: `INSERT INTO ${s}.quota_call_ceilings (tenant, ceilings_json, updated_at_ms) VALUES ($1, $2::jsonb, $3)
  ON CONFLICT (tenant) DO UPDATE SET ceilings_json = excluded.ceilings_json, updated_at_ms = excluded.updated_at_ms`,
    deleteCeilings: `DELETE FROM ${s}.quota_call_ceilings WHERE tenant = $1`,
    selectCall: `SELECT ${RESERVATION_COLUMNS} FROM ${s}.quota_call_reservations WHERE tenant = $1 AND call_id = $2`,
    selectOpen: `SELECT ${RESERVATION_COLUMNS} FROM ${s}.quota_call_reservations
  WHERE tenant = $1 AND status = 'open' ORDER BY deadline_ms, call_id LIMIT $2`,
  } as const;
}

/** The statements of one store's model-call books. */
export type PostgresCallQueries = ReturnType<typeof postgresCallQueries>;
