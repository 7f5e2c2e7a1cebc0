/**
 * The SQL of leases, the sweep, the operator listings and acts, as named constants with named
 * placeholders, each confined to one tenant by its leading key (docs/design/rules.md#l34–#l37). A
 * lease is live at `@atMs` when its pass is unsettled and it expires after `@atMs`; it is lapsed at
 * its expiry instant and after.
 */

// ── runs and passes ─────────────────────────────────────────────────────────

/** The pass row with its settle stamp, for fencing and for the renewed expiry. */
export const SELECT_PASS_LEASE = `SELECT lease_expires_at_ms, settled_at_ms FROM quota_passes
  WHERE tenant = @tenant AND run_id = @run AND epoch = @epoch`;

/** Whether any pass of the run still holds a live lease at @atMs (the sweep leaves such a run alone). */
export const HAS_LIVE_PASS = `SELECT EXISTS (SELECT 1 FROM quota_passes
  WHERE tenant = @tenant AND run_id = @run AND settled_at_ms IS NULL AND lease_expires_at_ms > @atMs) AS live`;

/**
 * Sweep candidates: registered slot holders and `running` runs with no live
 * pass. Driven from the slot table and the status index, never a scan of every run ever admitted.
 */
export const LIST_LAPSED_RUNS = `SELECT c.run_id FROM (
    SELECT run_id FROM quota_running WHERE tenant = @tenant AND run_id > @after
    UNION
    SELECT run_id FROM quota_runs WHERE tenant = @tenant AND status = 'running' AND run_id > @after
  ) AS c
  WHERE EXISTS (SELECT 1 FROM quota_runs r WHERE r.tenant = @tenant AND r.run_id = c.run_id)
    AND NOT EXISTS (SELECT 1 FROM quota_passes p WHERE p.tenant = @tenant AND p.run_id = c.run_id
      AND p.settled_at_ms IS NULL AND p.lease_expires_at_ms > @atMs)
  ORDER BY c.run_id LIMIT @limit`;

const RUN_SUMMARY_COLUMNS = `r.run_id, r.status, r.agent_name, r.agent_digest, r.chain_json, r.admitted_at_ms, r.last_epoch,
    r.status_since_ms,
    EXISTS (SELECT 1 FROM quota_running s WHERE s.tenant = r.tenant AND s.run_id = r.run_id) AS holds_slot,
    (SELECT p.lease_expires_at_ms FROM quota_passes p
      WHERE p.tenant = r.tenant AND p.run_id = r.run_id AND p.epoch = r.last_epoch) AS lease_expires_at_ms`;

/** A page of the registry in ascending run id, bytewise. */
export const LIST_RUNS = `SELECT ${RUN_SUMMARY_COLUMNS} FROM quota_runs r
  WHERE r.tenant = @tenant AND r.run_id > @after ORDER BY r.run_id LIMIT @limit`;

/** A page of the registry of some statuses (`@statuses` is a JSON array of status strings). */
export const LIST_RUNS_BY_STATUS = `SELECT ${RUN_SUMMARY_COLUMNS} FROM quota_runs r
  WHERE r.tenant = @tenant AND r.run_id > @after AND r.status IN (SELECT value FROM json_each(@statuses))
  ORDER BY r.run_id LIMIT @limit`;

/** Lapsed passes never settled, of runs not released (an operator gave those up). */
export const LIST_UNSETTLED_PASSES = `SELECT p.run_id, p.epoch, p.period, p.takes_slot, p.started_at_ms, p.lease_expires_at_ms
  FROM quota_passes p JOIN quota_runs r ON r.tenant = p.tenant AND r.run_id = p.run_id
  WHERE p.tenant = @tenant AND p.settled_at_ms IS NULL AND p.lease_expires_at_ms <= @atMs AND r.status <> 'released'
  ORDER BY p.run_id, p.epoch LIMIT @limit`;

/** Non-zero holds of runs paused since @idleSinceMs or earlier. */
export const LIST_IDLE_HOLDS = `SELECT h.run_id, h.period, h.tokens, h.minor_units, r.status_since_ms
  FROM quota_reserved h JOIN quota_runs r ON r.tenant = h.tenant AND r.run_id = h.run_id
  WHERE h.tenant = @tenant AND r.status = 'paused' AND r.status_since_ms <= @idleSinceMs
    AND (h.tokens > 0 OR h.minor_units > 0)
  ORDER BY h.run_id LIMIT @limit`;

// ── audit chain ─────────────────────────────────────────────────────────────

/** Audit rows after a sequence number, oldest first: one page of the chain to verify. */
export const LIST_AUDIT_CHAIN = `SELECT seq, at_ms, actor, basis, action, subject, detail_json, hash FROM quota_audit
  WHERE tenant = @tenant AND seq > @afterSeq ORDER BY seq LIMIT @limit`;
