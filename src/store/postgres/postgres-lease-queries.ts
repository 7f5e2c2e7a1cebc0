/**
 * The SQL of the run registry, leases, the sweep and the operator listings, for one quoted schema
 * `s` (mirrors sqlite-lease-queries.ts), each confined to one tenant by its leading key
 * (docs/design/rules.md#l34–#l37). A lease is live at an instant when its pass is unsettled and it
 * expires after that instant; it is lapsed at its expiry instant and after.
 */
export function postgresLeaseQueries(s: string) {
  return {
    selectRun: `SELECT run_id, status, agent_name, agent_digest, chain_json::text AS chain_json, admitted_at_ms, last_epoch
      FROM ${s}.quota_runs WHERE tenant = $1 AND run_id = $2`,
    /** A page of the registry in ascending run id, bytewise, optionally of some statuses ($4: text[] or null). */
    listRuns: `SELECT r.run_id, r.status, r.agent_name, r.agent_digest, r.chain_json::text AS chain_json, r.admitted_at_ms,
        r.last_epoch, r.status_since_ms,
        EXISTS (SELECT 1 FROM ${s}.quota_running x WHERE x.tenant = r.tenant AND x.run_id = r.run_id) AS holds_slot,
        (SELECT p.lease_expires_at_ms FROM ${s}.quota_passes p
          WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.epoch = r.last_epoch) AS lease_expires_at_ms
      FROM ${s}.quota_runs r
      WHERE r.tenant = $1 AND r.run_id > $2 AND ($4::text[] IS NULL OR r.status = ANY ($4::text[]))
      ORDER BY r.run_id LIMIT $3`,
    /**
     * Sweep candidates: registered slot holders and running runs with no live
     * pass (unsettled, lease after $2). Driven from the slot table and the status index.
     */
    listLapsedRuns: `SELECT c.run_id FROM (
        SELECT run_id FROM ${s}.quota_running WHERE tenant = $1 AND run_id > $3
        UNION
        SELECT run_id FROM ${s}.quota_runs WHERE tenant = $1 AND status = 'running' AND run_id > $3
      ) AS c
      WHERE EXISTS (SELECT 1 FROM ${s}.quota_runs r WHERE r.tenant = $1 AND r.run_id = c.run_id)
        AND NOT EXISTS (SELECT 1 FROM ${s}.quota_passes p WHERE p.tenant = $1 AND p.run_id = c.run_id
          AND p.settled_at_ms IS NULL AND p.lease_expires_at_ms > $2)
      ORDER BY c.run_id LIMIT $4`,
    /** Lapsed passes never settled, of runs not released (an operator gave those up). */
    listUnsettledPasses: `SELECT p.run_id, p.epoch, p.period, p.takes_slot, p.started_at_ms, p.lease_expires_at_ms
      FROM ${s}.quota_passes p JOIN ${s}.quota_runs r ON r.tenant = p.tenant AND r.run_id = p.run_id
      WHERE p.tenant = $1 AND p.settled_at_ms IS NULL AND p.lease_expires_at_ms <= $2 AND r.status <> 'released'
      ORDER BY p.run_id, p.epoch LIMIT $3`,
    /** Non-zero holds of runs paused since $2 or earlier. */
    listIdleHolds: `SELECT h.run_id, h.period, h.tokens, h.minor_units, r.status_since_ms
      FROM ${s}.quota_reserved h JOIN ${s}.quota_runs r ON r.tenant = h.tenant AND r.run_id = h.run_id
      WHERE h.tenant = $1 AND r.status = 'paused' AND r.status_since_ms <= $2 AND (h.tokens > 0 OR h.minor_units > 0)
      ORDER BY h.run_id LIMIT $3`,
  } as const;
}
