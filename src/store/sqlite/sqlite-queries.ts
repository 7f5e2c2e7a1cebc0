import { auditChainsSql, listTenantsSql, tenantRecordsSql } from '../known-tenants.js';

/**
 * The SQL statements of the SQLite adapter, as named constants with named placeholders (`@tenant`,
 * `@run`, …); nothing is interpolated. Each statement is confined to one tenant by its leading key
 * (docs/design/rules.md#l34–#l37). Sums clamp at 2^53 − 1 so amounts saturate instead of losing
 * precision. Those of waiting admissions are in sqlite-waiter-queries.ts, of retention in
 * sqlite-retention-queries.ts, of leases and the operator listings in sqlite-lease-queries.ts, and
 * of an admission retry in sqlite-admit-retry.ts. Mirrors postgres-queries.ts.
 */
const MAX = '9007199254740991';

// ── running set (slots) ─────────────────────────────────────────────────────

/** Takes the run's slot; a retry keeps the first admitted_at_ms. */
export const INSERT_SLOT = `INSERT INTO quota_running (tenant, run_id, admitted_at_ms, agent_name) VALUES (@tenant, @run, @atMs, @agentName)
  ON CONFLICT (tenant, run_id) DO NOTHING`;
/** Gives the slot back (release, or a slot-releasing settle); idempotent. */
export const DELETE_SLOT = 'DELETE FROM quota_running WHERE tenant = @tenant AND run_id = @run';
/** Whether the run holds a slot: one point read. */
export const SLOT_EXISTS = 'SELECT 1 AS held FROM quota_running WHERE tenant = @tenant AND run_id = @run';
/** The tenant's slot count, a range over its prefix. */
export const COUNT_SLOTS = 'SELECT count(*) AS running FROM quota_running WHERE tenant = @tenant';
/** Slot holders in ascending run-id order, bytewise (docs/design/rules.md#p5). */
export const LIST_SLOTS = 'SELECT run_id FROM quota_running WHERE tenant = @tenant ORDER BY run_id LIMIT @limit';

/** What a reserving transaction reads before deciding, in one statement. */
export const SELECT_SLOT_SNAPSHOT = `SELECT
  EXISTS (SELECT 1 FROM quota_running WHERE tenant = @tenant AND run_id = @run) AS slot_held,
  EXISTS (SELECT 1 FROM quota_reserved WHERE tenant = @tenant AND run_id = @run) AS hold_held,
  (SELECT count(*) FROM quota_running WHERE tenant = @tenant) AS running`;

// ── settled totals and holds ────────────────────────────────────────────────

/**
 * Whether a hold counts in period `@period`: in a month, every hold whose
 * period is that month or one of its days; in a day, every hold of that day, and every hold of its
 * month that was held or carried on that day (`day`).
 */
const HOLD_IN_PERIOD = `(CASE WHEN length(@period) = 7 THEN period BETWEEN @period AND @period || '-99'
  ELSE period = @period OR (period = substr(@period, 1, 7) AND day = @period) END)`;

/**
 * Settled and reserved figures of one period from one snapshot: read apart, a settle between them
 * would undercount the period by its spend.
 */
export const SELECT_PERIOD_FIGURES = `SELECT
  coalesce((SELECT tokens FROM quota_spent WHERE tenant = @tenant AND period = @period), 0) AS settled_tokens,
  coalesce((SELECT minor_units FROM quota_spent WHERE tenant = @tenant AND period = @period), 0) AS settled_minor_units,
  (SELECT min(total(tokens), ${MAX}) FROM quota_reserved WHERE tenant = @tenant AND ${HOLD_IN_PERIOD}) AS reserved_tokens,
  (SELECT min(total(minor_units), ${MAX}) FROM quota_reserved WHERE tenant = @tenant AND ${HOLD_IN_PERIOD})
    AS reserved_minor_units`;

/** One period's settled total; no row reads as zero (docs/design/rules.md#c8). */
export const SELECT_SPENT = 'SELECT tokens, minor_units FROM quota_spent WHERE tenant = @tenant AND period = @period';

/**
 * Accrues a settle's spend (docs/design/rules.md#c5) unless the total would pass 2^53 − 1: then it
 * changes no row, and the caller refuses the settle (docs/design/rules.md#p7: refused, never
 * clamped).
 */
export const ACCRUE_SPENT = `INSERT INTO quota_spent (tenant, period, tokens, minor_units)
  VALUES (@tenant, @period, @tokens, @minorUnits)
  ON CONFLICT (tenant, period) DO UPDATE SET
    tokens = tokens + excluded.tokens,
    minor_units = minor_units + excluded.minor_units
  WHERE tokens + excluded.tokens <= ${MAX} AND minor_units + excluded.minor_units <= ${MAX}
  RETURNING tokens, minor_units`;

/** Sum of the holds that count in one period, read clamped (the books keep it ≤ 2^53 − 1). */
export const SUM_RESERVED = `SELECT min(total(tokens), ${MAX}) AS tokens, min(total(minor_units), ${MAX}) AS minor_units
  FROM quota_reserved WHERE tenant = @tenant AND ${HOLD_IN_PERIOD}`;

/** The run's single hold, if any. */
export const SELECT_HOLD = 'SELECT period, day, tokens, minor_units FROM quota_reserved WHERE tenant = @tenant AND run_id = @run';
/** Inserts a hold; only called when the run holds none, so the existing hold always wins. */
export const INSERT_HOLD = `INSERT INTO quota_reserved (tenant, run_id, period, day, tokens, minor_units, agent_name)
  VALUES (@tenant, @run, @period, @day, @tokens, @minorUnits, @agentName)`;
/** Deletes the hold (release, or a concluding settle gives back what was never spent). */
export const DELETE_HOLD = 'DELETE FROM quota_reserved WHERE tenant = @tenant AND run_id = @run';
/** Sets the amount of the run's hold (a non-concluding settle shrank it). */
export const SET_HOLD_AMOUNT = `UPDATE quota_reserved SET tokens = @tokens, minor_units = @minorUnits
  WHERE tenant = @tenant AND run_id = @run`;
/** Carry moves the hold whole in one write, so one period loses exactly what the other gains (docs/design/rules.md#c17). */
export const CARRY_HOLD = `UPDATE quota_reserved SET period = @period, day = @day
  WHERE tenant = @tenant AND run_id = @run`;
/** Hold rows in ascending run-id order (docs/design/rules.md#c18). */
export const LIST_HOLDS = `SELECT run_id, period, tokens, minor_units FROM quota_reserved
  WHERE tenant = @tenant ORDER BY run_id LIMIT @limit`;

// ── per-agent and plane-wide figures ────────────────────────────────────────

/** The tenant's slots held by runs of agent `@agent`. */
export const COUNT_AGENT_SLOTS = 'SELECT count(*) AS running FROM quota_running WHERE agent_name = @agent AND tenant = @tenant';
/** Every tenant's slots (the plane-wide running count). */
export const COUNT_PLANE_SLOTS = 'SELECT count(*) AS running FROM quota_running';
/** Every tenant's slots held by runs of agent `@agent`. */
export const COUNT_PLANE_AGENT_SLOTS = 'SELECT count(*) AS running FROM quota_running WHERE agent_name = @agent';

/** An agent's settled and reserved figures of one period in the tenant, from one snapshot (as SELECT_PERIOD_FIGURES). */
export const SELECT_AGENT_PERIOD_FIGURES = `SELECT
  coalesce((SELECT tokens FROM quota_agent_spent WHERE tenant = @tenant AND agent_name = @agent AND period = @period), 0) AS settled_tokens,
  coalesce((SELECT minor_units FROM quota_agent_spent WHERE tenant = @tenant AND agent_name = @agent AND period = @period), 0)
    AS settled_minor_units,
  (SELECT min(total(tokens), ${MAX}) FROM quota_reserved WHERE tenant = @tenant AND agent_name = @agent AND ${HOLD_IN_PERIOD})
    AS reserved_tokens,
  (SELECT min(total(minor_units), ${MAX}) FROM quota_reserved WHERE tenant = @tenant AND agent_name = @agent AND ${HOLD_IN_PERIOD})
    AS reserved_minor_units`;

/** One agent's settled total of one period; no row reads as zero. */
export const SELECT_AGENT_SPENT = `SELECT tokens, minor_units FROM quota_agent_spent
  WHERE tenant = @tenant AND agent_name = @agent AND period = @period`;

/** Accrues a settle's spend to the agent's books; the caller checked the sum stays within 2^53 − 1. */
export const ACCRUE_AGENT_SPENT = `INSERT INTO quota_agent_spent (tenant, agent_name, period, tokens, minor_units)
  VALUES (@tenant, @agent, @period, @tokens, @minorUnits)
  ON CONFLICT (tenant, agent_name, period) DO UPDATE SET
    tokens = tokens + excluded.tokens,
    minor_units = minor_units + excluded.minor_units
  RETURNING tokens, minor_units`;

/** The agent name of a registered run (NULL without one, no row for an unregistered run). */
export const SELECT_RUN_AGENT = 'SELECT agent_name FROM quota_runs WHERE tenant = @tenant AND run_id = @run';

/** The stored plane-wide ceiling. */
export const SELECT_PLANE_CEILING = 'SELECT ceiling_json FROM quota_plane WHERE id = 1';
/** Replaces the plane-wide ceiling. */
export const UPSERT_PLANE_CEILING = `INSERT INTO quota_plane (id, ceiling_json) VALUES (1, @ceilingJson)
  ON CONFLICT (id) DO UPDATE SET ceiling_json = excluded.ceiling_json`;

/** The plane-wide halt (docs/design/rules.md#c49), at most one row. */
export const SELECT_PLANE_HALT = 'SELECT reason, by_actor, by_basis, at_ms, reaches_running FROM quota_plane_halt WHERE id = 1';
/** Throws or re-throws the plane-wide halt, replacing the row. */
export const UPSERT_PLANE_HALT = `INSERT INTO quota_plane_halt (id, reason, by_actor, by_basis, at_ms, reaches_running)
  VALUES (1, @reason, @actor, @basis, @atMs, @reachesRunning)
  ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, by_actor = excluded.by_actor, by_basis = excluded.by_basis,
    at_ms = excluded.at_ms, reaches_running = excluded.reaches_running`;
/** Lifts the plane-wide halt. */
export const DELETE_PLANE_HALT = 'DELETE FROM quota_plane_halt WHERE id = 1';

// ── receipts ────────────────────────────────────────────────────────────────

/**
 * The receipt of (run, epoch) as `stored_*` columns of pass `p` and `quota_settled` row `s` (all
 * NULL without one). A pass's own settle writes it into the pass row (`receipt_*`; its period and
 * whether it released the slot are the pass's), the port's settle into `quota_settled`; at most one
 * of the two exists, so the columns take whichever does.
 */
const RECEIPT_COLUMNS = `CASE WHEN p.receipt_tokens IS NOT NULL THEN p.period ELSE s.period END AS stored_period,
    coalesce(p.receipt_tokens, s.tokens) AS stored_tokens,
    CASE WHEN p.receipt_tokens IS NOT NULL THEN p.receipt_minor_units ELSE s.minor_units END AS stored_minor_units,
    CASE WHEN p.receipt_tokens IS NOT NULL THEN p.takes_slot ELSE s.release_slot END AS stored_release_slot,
    CASE WHEN p.receipt_tokens IS NOT NULL THEN p.receipt_concludes ELSE s.concludes END AS stored_concludes`;

/** The receipt columns of (run, epoch), in one row whether or not the pass or a receipt exists. */
export const SELECT_RECEIPT = `SELECT ${RECEIPT_COLUMNS}
  FROM (SELECT @tenant AS tenant, @run AS run_id, @epoch AS epoch) AS k
  LEFT JOIN quota_passes p ON p.tenant = k.tenant AND p.run_id = k.run_id AND p.epoch = k.epoch
  LEFT JOIN quota_settled s ON s.tenant = k.tenant AND s.run_id = k.run_id AND s.epoch = k.epoch`;
/** Writes a receipt of the port's settle; the primary key makes a (run, epoch) settle at most once. */
export const INSERT_RECEIPT = `INSERT INTO quota_settled (tenant, run_id, epoch, period, tokens, minor_units, release_slot, concludes)
  VALUES (@tenant, @run, @epoch, @period, @tokens, @minorUnits, @releaseSlot, @concludes)`;

// ── halts ───────────────────────────────────────────────────────────────────

/** Every standing halt in one read, bytewise by scope key (BINARY collation; docs/design/rules.md#c23). */
export const LIST_HALTS = `SELECT scope, reason, by_actor, by_basis, at_ms, reaches_running FROM quota_halted
  WHERE tenant = @tenant ORDER BY scope`;
/** The halt row of one scope, for the compare-and-delete of liftHaltIf (docs/design/rules.md#c28–#c30). */
export const SELECT_HALT = `SELECT scope, reason, by_actor, by_basis, at_ms, reaches_running FROM quota_halted
  WHERE tenant = @tenant AND scope = @scope`;
/** A re-throw replaces the row, never appends (docs/design/rules.md#c22). */
export const UPSERT_HALT = `INSERT INTO quota_halted (tenant, scope, reason, by_actor, by_basis, at_ms, reaches_running)
  VALUES (@tenant, @scope, @reason, @actor, @basis, @atMs, @reachesRunning)
  ON CONFLICT (tenant, scope) DO UPDATE SET
    reason = excluded.reason, by_actor = excluded.by_actor, by_basis = excluded.by_basis, at_ms = excluded.at_ms,
    reaches_running = excluded.reaches_running`;
/** Deletes one scope; other scopes stand (docs/design/rules.md#c24–#c26). */
export const DELETE_HALT = 'DELETE FROM quota_halted WHERE tenant = @tenant AND scope = @scope';

// ── rate reservations ───────────────────────────────────────────────────────

/** Whether this dispatch key was already reserved: then it is neither judged nor inserted (docs/design/rules.md#c33). */
export const RATE_KEY_EXISTS = `SELECT 1 AS present FROM quota_rate
  WHERE tenant = @tenant AND grant_ref = @grant AND run_id = @run AND dispatch = @dispatch`;
/** Prunes one (tenant, grant) at the store-wide floor only, never by a caller's window (docs/design/rules.md#c38). */
export const PRUNE_RATE = `DELETE FROM quota_rate
  WHERE tenant = @tenant AND grant_ref = @grant AND reserved_at_ms <= @floorMs`;
/** The grant's latest ordinal and recorded instant; absent before its first dispatch. */
export const SELECT_RATE_GRANT = `SELECT last_ordinal, last_at_ms FROM quota_rate_grants
  WHERE tenant = @tenant AND grant_ref = @grant`;
/** One dispatch's recorded instant, by ordinal: a primary-key point lookup. */
export const SELECT_RATE_AT_ORDINAL = `SELECT reserved_at_ms FROM quota_rate
  WHERE tenant = @tenant AND grant_ref = @grant AND ordinal = @ordinal`;
/** The oldest dispatch a window counts (recorded strictly after its start): one index seek. */
export const SELECT_FIRST_COUNTED_RATE = `SELECT ordinal FROM quota_rate
  WHERE tenant = @tenant AND grant_ref = @grant AND reserved_at_ms > @sinceMs
  ORDER BY reserved_at_ms, ordinal LIMIT 1`;
/** Records one dispatch under its ordinal at its recorded instant. */
export const INSERT_RATE = `INSERT INTO quota_rate (tenant, grant_ref, ordinal, run_id, dispatch, reserved_at_ms)
  VALUES (@tenant, @grant, @ordinal, @run, @dispatch, @recordedMs)`;
/** Moves the grant's latest ordinal and recorded instant on; pruning never touches this row. */
export const UPSERT_RATE_GRANT = `INSERT INTO quota_rate_grants (tenant, grant_ref, last_ordinal, last_at_ms)
  VALUES (@tenant, @grant, @ordinal, @recordedMs)
  ON CONFLICT (tenant, grant_ref) DO UPDATE SET last_ordinal = excluded.last_ordinal, last_at_ms = excluded.last_at_ms`;

// ── tenant quotas ───────────────────────────────────────────────────────────

/** The tenant's stored quota JSON. */
export const SELECT_QUOTA = 'SELECT quota_json FROM quota_tenants WHERE tenant = @tenant';
/** Replaces the tenant's quota. */
export const UPSERT_QUOTA = `INSERT INTO quota_tenants (tenant, quota_json) VALUES (@tenant, @quotaJson)
  ON CONFLICT (tenant) DO UPDATE SET quota_json = excluded.quota_json`;

// ── run registry and passes ─────────────────────────────────────────────────

/** One run registry row. */
export const SELECT_RUN = `SELECT run_id, status, agent_name, agent_digest, chain_json, admitted_at_ms, last_epoch
  FROM quota_runs WHERE tenant = @tenant AND run_id = @run`;
/** Registers an admitted run, running at epoch 1 since its admission. */
export const INSERT_RUN = `INSERT INTO quota_runs
  (tenant, run_id, status, agent_name, agent_digest, chain_json, budget_json, width, admitted_at_ms, last_epoch, status_since_ms)
  VALUES (@tenant, @run, 'running', @agentName, @agentDigest, @chainJson, @budgetJson, @width, @atMs, 1, @atMs)`;
/** A resume: the run runs again at its new epoch, since the resume. */
export const UPDATE_RUN_PASS = `UPDATE quota_runs SET status = 'running', last_epoch = @epoch, status_since_ms = @atMs
  WHERE tenant = @tenant AND run_id = @run`;
/** Sets a run's status, since @atMs. */
export const SET_RUN_STATUS = `UPDATE quota_runs SET status = @status, status_since_ms = @atMs
  WHERE tenant = @tenant AND run_id = @run`;
/** Sets the lease expiry of a pass. */
export const SET_LEASE = `UPDATE quota_passes SET lease_expires_at_ms = @leaseExpiresAtMs
  WHERE tenant = @tenant AND run_id = @run AND epoch = @epoch`;

/** Records a pass as admission or resume opened it, with the hold its grant reported. */
export const INSERT_PASS = `INSERT INTO quota_passes
  (tenant, run_id, epoch, period, takes_slot, started_at_ms, lease_expires_at_ms, hold_tokens, hold_minor_units)
  VALUES (@tenant, @run, @epoch, @period, @takesSlot, @atMs, @leaseExpiresAtMs, @holdTokens, @holdMinorUnits)`;
/**
 * Everything a pass's settle decides on, in one statement: the pass with its receipt columns (see
 * `RECEIPT_COLUMNS`), its run's registry row (NULL columns when the run is missing) and whether the
 * run id was pruned.
 */
export const SELECT_PASS_TO_SETTLE = `SELECT ${RECEIPT_COLUMNS},
    p.period, p.takes_slot, p.started_at_ms, p.hold_tokens, p.hold_minor_units,
    r.run_id, r.status, r.agent_name, r.agent_digest, r.chain_json, r.admitted_at_ms, r.last_epoch,
    EXISTS (SELECT 1 FROM quota_pruned x WHERE x.tenant = p.tenant AND x.run_id = p.run_id) AS pruned
  FROM quota_passes p
  LEFT JOIN quota_settled s ON s.tenant = p.tenant AND s.run_id = p.run_id AND s.epoch = p.epoch
  LEFT JOIN quota_runs r ON r.tenant = p.tenant AND r.run_id = p.run_id
  WHERE p.tenant = @tenant AND p.run_id = @run AND p.epoch = @epoch`;
/** Writes the receipt of a pass's own settle into its row and stamps when it was settled. */
export const RECORD_PASS_RECEIPT = `UPDATE quota_passes
  SET settled_at_ms = @atMs, receipt_tokens = @tokens, receipt_minor_units = @minorUnits, receipt_concludes = @concludes
  WHERE tenant = @tenant AND run_id = @run AND epoch = @epoch`;

// ── audit log ───────────────────────────────────────────────────────────────

/** The tenant's newest audit row, which the next row chains from. */
export const SELECT_AUDIT_HEAD = `SELECT seq, hash FROM quota_audit WHERE tenant = @tenant ORDER BY seq DESC LIMIT 1`;
/** Appends one audit row; the (tenant, seq) key keeps the chain linear. */
export const INSERT_AUDIT = `INSERT INTO quota_audit
  (tenant, seq, at_ms, actor, basis, action, subject, detail_json, prev_hash, hash)
  VALUES (@tenant, @seq, @atMs, @actor, @basis, @action, @subject, @detailJson, @prevHash, @hash)`;
/** The newest audit rows first. */
export const LIST_AUDIT = `SELECT seq, at_ms, actor, basis, action, subject, detail_json, hash FROM quota_audit
  WHERE tenant = @tenant ORDER BY seq DESC LIMIT @limit`;
/** The newest audit rows of one action first. */
export const LIST_AUDIT_BY_ACTION = `SELECT seq, at_ms, actor, basis, action, subject, detail_json, hash FROM quota_audit
  WHERE tenant = @tenant AND action = @action ORDER BY seq DESC LIMIT @limit`;

// ── store-wide ──────────────────────────────────────────────────────────────

/**
 * Every known tenant in byte order (BINARY collation; rules.md#l95): those with a record of any
 * kind that makes a tenant known (known-tenants.ts). A halt thrown and lifted leaves only its
 * audit rows, and they must still be verifiable.
 */
export const LIST_TENANTS = listTenantsSql('');
export const LIST_AUDIT_CHAINS = auditChainsSql('');
/** Whether the store holds a record of each kind that makes `@tenant` known: one indexed EXISTS per kind. */
export const TENANT_RECORDS = tenantRecordsSql('', '@tenant');
