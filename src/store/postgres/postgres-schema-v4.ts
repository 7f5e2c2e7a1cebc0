/**
 * Version 4 of the PostgreSQL schema (quoted schema `s`; issue #5: leases, sweep, attention), the
 * counterpart of SQLite's version 3, before the functions of migration 4 are replaced:
 * - `quota_runs.status_since_ms`: when the run entered its status (Unix ms). Existing rows take
 *   the instant their latest pass settled, else the instant it started, else their admission.
 * - `quota_runs.status` may only hold a known status, and `chain_json` becomes JSONB checked to be
 *   an array of strings: the lifecycle functions read both inside the database (a Withheld answer
 *   needs the chain), so the database refuses what `decodeRun` would call corrupt.
 * - `quota_runs_by_status`: the sweep and the listings read one tenant's runs of one status.
 * - `quota_passes_unsettled`: a partial index over passes whose receipt is unwritten, by lease
 *   expiry: the sweep and `unsettledPasses` read only those.
 */
export function postgresSchemaV4(s: string): string {
  return `
ALTER TABLE ${s}.quota_runs ADD COLUMN status_since_ms BIGINT;
UPDATE ${s}.quota_runs r SET status_since_ms = coalesce(
  (SELECT coalesce(p.settled_at_ms, p.started_at_ms) FROM ${s}.quota_passes p
    WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.epoch = r.last_epoch),
  r.admitted_at_ms);
ALTER TABLE ${s}.quota_runs ALTER COLUMN status_since_ms SET NOT NULL;
ALTER TABLE ${s}.quota_runs ADD CONSTRAINT quota_runs_status_known
  CHECK (status IN ('running', 'paused', 'withheld', 'stranded', 'concluded', 'released'));

CREATE OR REPLACE FUNCTION ${s}.quota_chain_ok(p_chain jsonb) RETURNS boolean
IMMUTABLE LANGUAGE sql AS $fn$
  SELECT CASE
    WHEN jsonb_typeof(p_chain) <> 'array' THEN false
    ELSE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(p_chain) AS e(principal) WHERE jsonb_typeof(e.principal) <> 'string')
  END
$fn$;
ALTER TABLE ${s}.quota_runs ALTER COLUMN chain_json TYPE jsonb USING chain_json::jsonb;
ALTER TABLE ${s}.quota_runs ADD CONSTRAINT quota_runs_chain_ok CHECK (chain_json IS NULL OR ${s}.quota_chain_ok(chain_json));

CREATE INDEX quota_runs_by_status ON ${s}.quota_runs (tenant, status, run_id);
CREATE INDEX quota_passes_unsettled ON ${s}.quota_passes (tenant, lease_expires_at_ms) WHERE settled_at_ms IS NULL;
`;
}
