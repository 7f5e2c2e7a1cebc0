/**
 * Row checks for the quoted schema `s`, shared by the decision functions and a CHECK constraint.
 *
 * `quota_json_ok` mirrors what `parseQuota` accepts (known keys only; ceilings absent, null or a
 * non-negative integer ≤ 2^53 − 1; period `monthly`/`daily`; `rateCeilings` an object of arrays of
 * `{count, windowSeconds}` amounts; `agents` an object of agent name → ceilings). It guards `quota_tenants.quota_json`, so the admission and
 * dispatch functions can read ceilings out of it without a round trip back to TypeScript and can
 * never act on a quota `parseQuota` would call corrupt (grant keys are left to `parseQuota` when
 * the quota is read: a bad key cannot change a decision about another grant).
 *
 * `quota_halt_row_ok` mirrors `decodeHaltRow`: a scope `parseHaltScope` accepts, a known operator
 * basis and a safe-integer instant. Admission treats an unreadable halt like a covering one, hands
 * every halt row to TypeScript, and `decodeHaltRow` throws `STORE_CORRUPT` (contract §5.2).
 *
 * CASE, not AND/OR, guards each JSON function: SQL does not promise to evaluate operands in order.
 */
export function checkFunctionsSql(s: string): string {
  return `
CREATE FUNCTION ${s}.quota_json_amount_ok(p_value jsonb, p_required boolean) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN p_value IS NULL OR jsonb_typeof(p_value) = 'null' THEN NOT p_required
    WHEN jsonb_typeof(p_value) = 'number' THEN
      (p_value #>> '{}')::numeric BETWEEN 0 AND 9007199254740991 AND (p_value #>> '{}')::numeric % 1 = 0
    ELSE false
  END
$fn$;

CREATE FUNCTION ${s}.quota_json_ceilings_ok(p_ceilings jsonb) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN jsonb_typeof(p_ceilings) <> 'array' THEN false
    ELSE NOT EXISTS (
      SELECT 1 FROM jsonb_array_elements(p_ceilings) AS c(ceiling)
       WHERE CASE
               WHEN jsonb_typeof(c.ceiling) <> 'object' THEN true
               ELSE NOT (${s}.quota_json_amount_ok(c.ceiling -> 'count', true)
                         AND ${s}.quota_json_amount_ok(c.ceiling -> 'windowSeconds', true))
             END)
  END
$fn$;

-- A map of agent name → object of ceilings named in p_fields (issue 12); absent or null is fine.
CREATE FUNCTION ${s}.quota_json_agents_ok(p_agents jsonb, p_fields text[]) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN p_agents IS NULL OR jsonb_typeof(p_agents) = 'null' THEN true
    WHEN jsonb_typeof(p_agents) <> 'object' THEN false
    ELSE NOT EXISTS (
      SELECT 1 FROM jsonb_each(p_agents) AS a(agent, ceilings)
       WHERE CASE
               WHEN jsonb_typeof(a.ceilings) <> 'object' THEN true
               ELSE EXISTS (SELECT 1 FROM jsonb_each(a.ceilings) AS c(name, ceiling)
                             WHERE NOT (c.name = ANY (p_fields)) OR NOT ${s}.quota_json_amount_ok(c.ceiling, false))
             END)
  END
$fn$;

CREATE FUNCTION ${s}.quota_json_ok(p_quota jsonb) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN jsonb_typeof(p_quota) <> 'object' THEN false
    ELSE NOT EXISTS (
           SELECT 1 FROM jsonb_object_keys(p_quota) AS k(name)
            WHERE k.name NOT IN ('maxConcurrentRuns', 'maxTokensPerPeriod', 'maxMinorUnitsPerPeriod', 'period', 'rateCeilings',
                                 'agents'))
     AND ${s}.quota_json_amount_ok(p_quota -> 'maxConcurrentRuns', false)
     AND ${s}.quota_json_amount_ok(p_quota -> 'maxTokensPerPeriod', false)
     AND ${s}.quota_json_amount_ok(p_quota -> 'maxMinorUnitsPerPeriod', false)
     AND CASE
           WHEN p_quota -> 'period' IS NULL OR jsonb_typeof(p_quota -> 'period') = 'null' THEN true
           WHEN jsonb_typeof(p_quota -> 'period') <> 'string' THEN false
           ELSE p_quota ->> 'period' IN ('monthly', 'daily')
         END
     AND CASE
           WHEN p_quota -> 'rateCeilings' IS NULL OR jsonb_typeof(p_quota -> 'rateCeilings') = 'null' THEN true
           WHEN jsonb_typeof(p_quota -> 'rateCeilings') <> 'object' THEN false
           ELSE NOT EXISTS (
             SELECT 1 FROM jsonb_each(p_quota -> 'rateCeilings') AS g(grant_ref, ceilings)
              WHERE NOT ${s}.quota_json_ceilings_ok(g.ceilings))
         END
     AND ${s}.quota_json_agents_ok(p_quota -> 'agents',
           ARRAY['maxConcurrentRuns', 'maxTokensPerPeriod', 'maxMinorUnitsPerPeriod'])
  END
$fn$;

-- The plane-wide ceiling's JSON (issue 12) as parsePlaneCeiling accepts it: known keys only, a
-- ceiling amount, agents of { maxConcurrentRuns }, weights of amounts ≥ 1.
CREATE FUNCTION ${s}.quota_plane_json_ok(p_plane jsonb) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN jsonb_typeof(p_plane) <> 'object' THEN false
    ELSE NOT EXISTS (
           SELECT 1 FROM jsonb_object_keys(p_plane) AS k(name)
            WHERE k.name NOT IN ('maxConcurrentRuns', 'agents', 'weights'))
     AND ${s}.quota_json_amount_ok(p_plane -> 'maxConcurrentRuns', false)
     AND ${s}.quota_json_agents_ok(p_plane -> 'agents', ARRAY['maxConcurrentRuns'])
     AND CASE
           WHEN p_plane -> 'weights' IS NULL OR jsonb_typeof(p_plane -> 'weights') = 'null' THEN true
           WHEN jsonb_typeof(p_plane -> 'weights') <> 'object' THEN false
           ELSE NOT EXISTS (
             SELECT 1 FROM jsonb_each(p_plane -> 'weights') AS w(tenant, weight)
              WHERE CASE WHEN ${s}.quota_json_amount_ok(w.weight, true) THEN (w.weight #>> '{}')::numeric < 1 ELSE true END)
         END
  END
$fn$;

ALTER TABLE ${s}.quota_plane ADD CONSTRAINT quota_plane_json_ok CHECK (${s}.quota_plane_json_ok(ceiling_json));

ALTER TABLE ${s}.quota_tenants ADD CONSTRAINT quota_tenants_quota_json_ok CHECK (${s}.quota_json_ok(quota_json));

CREATE FUNCTION ${s}.quota_halt_row_ok(p_scope text, p_basis text, p_at_ms bigint) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT (p_scope = 'tenant'
          OR p_scope LIKE 'agent:_%'
          OR p_scope LIKE 'subject:_%'
          OR p_scope ~ '^revision:[0-9a-fA-F]{64}$')
     AND p_basis IN ('asserted', 'authenticated')
     AND p_at_ms BETWEEN -9007199254740991 AND 9007199254740991
$fn$;
`;
}
