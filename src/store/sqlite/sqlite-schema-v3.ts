/**
 * Version 3 of the SQLite schema (issue #5: leases, sweep, attention). Version 2 belongs to the
 * HTTP service's API keys; the two are independent, and each applies on its own.
 * - `quota_runs.status_since_ms`: when the run entered its status (Unix ms), so attention can say
 *   how long a run has been stranded, withheld or paused. Existing rows take the instant their
 *   latest pass settled, else the instant it started, else their admission.
 * - `quota_runs_by_status`: the sweep and the listings read one tenant's runs of one status.
 * - `quota_passes_unsettled`: a partial index over passes whose receipt is unwritten, by lease
 *   expiry: the sweep and `unsettledPasses` read only those, and a settled pass leaves it.
 * - `quota_reserved.day` and month rows that include their days (issue 9 fault 1; added to this
 *   file until the SQLite migrations are folded into one first migration).
 */
export const SQLITE_SCHEMA_V3 = `
ALTER TABLE quota_runs ADD COLUMN status_since_ms INTEGER;
UPDATE quota_runs SET status_since_ms = coalesce(
  (SELECT coalesce(p.settled_at_ms, p.started_at_ms) FROM quota_passes p
    WHERE p.tenant = quota_runs.tenant AND p.run_id = quota_runs.run_id AND p.epoch = quota_runs.last_epoch),
  admitted_at_ms);
CREATE INDEX quota_runs_by_status ON quota_runs (tenant, status, run_id);
CREATE INDEX quota_passes_unsettled ON quota_passes (tenant, lease_expires_at_ms) WHERE settled_at_ms IS NULL;
-- Issue 9 fault 1 (DESIGN.md decision 15): a hold of a month remembers the day it was held or
-- carried on, and what a day settled also counts in its month (month rows gain their days' totals).
ALTER TABLE quota_reserved ADD COLUMN day TEXT;
UPDATE quota_reserved SET day = period WHERE length(period) = 10;
INSERT INTO quota_spent (tenant, period, tokens, minor_units)
  SELECT tenant, substr(period, 1, 7), sum(tokens), sum(minor_units) FROM quota_spent
   WHERE length(period) = 10 GROUP BY tenant, substr(period, 1, 7)
  ON CONFLICT (tenant, period) DO UPDATE SET
    tokens = min(tokens + excluded.tokens, 9007199254740991),
    minor_units = min(minor_units + excluded.minor_units, 9007199254740991);
`;
