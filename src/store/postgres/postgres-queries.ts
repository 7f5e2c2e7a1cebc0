import { auditChainsSql, listTenantsSql, tenantRecordsSql } from '../known-tenants.js';
import { overranPassesSql } from '../overran-passes.js';
import { deleteTenantRowsSql, deletionBlockersSql, retireTenantEventsSql, tenantKeysSql } from '../tenant-deletion-sql.js';
import { booksQueries } from './postgres-books-io.js';
import { postgresCallQueries } from './postgres-call-queries.js';
import { postgresLeaseQueries } from './postgres-lease-queries.js';
import { postgresRetentionQueries } from './postgres-retention-queries.js';
import { waiterQueries } from './postgres-waiter-queries.js';

/**
 * Every SQL statement of the PostgreSQL adapter for one quoted schema `s`, built once per store.
 * Values are always `$n` parameters; the schema name is the only text interpolated, validated and
 * quoted once by `quoteSchemaName`. Each statement is confined to one tenant by its leading key
 * (docs/design/rules.md#l34–#l37). Hot statements are prepared per connection under a name that
 * includes the schema (`quotaplane/<name>/<schema>`), so two stores in one process never share one.
 */
export function postgresQueries(s: string) {
  const MAX = '9007199254740991';
  return {
    // ── decisions (see postgres-books-io.ts and migrations/) ─────────────────
    /** A batch's reads and writes of the books (postgres-books-io.ts). */
    books: booksQueries(s),
    /** Waiting admissions (postgres-waiters.ts). */
    waiters: waiterQueries(s),
    overranPasses: overranPassesSql(`${s}.`, '$1', '$2'),
    /** Retention: prune candidates, removal batches, tombstones. */
    retention: postgresRetentionQueries(s),
    /** The model-call books (postgres-call-books.ts, postgres-model-calls.ts). */
    calls: postgresCallQueries(s),
    /** A tenant's deletion (postgres-tenant-deletion.ts). */
    tenantDeletion: {
      blockers: deletionBlockersSql(`${s}.`, '$1', '$2'),
      keys: tenantKeysSql(`${s}.`, '$1'),
      deleteRows: deleteTenantRowsSql(`${s}.`, '$1'),
      retireEvents: retireTenantEventsSql(`${s}.`, '$1', '$2'),
    },

    // ── locks ──────────────────────────────────────────────────────────────
    /**
     * A tenant's lock, as every writer of its books takes it first (a batch takes it in
     * `quota_books_load`); raises the books' version, so kept rows are read again.
     */
    lockTenant: `SELECT ${s}.quota_admission_lock($1)`,

    // ── running set (slots) ─────────────────────────────────────────────────
    countSlots: `SELECT coalesce((SELECT running FROM ${s}.quota_figures WHERE tenant = $1), 0) AS running`,
    listSlots: `SELECT run_id FROM ${s}.quota_running WHERE tenant = $1 ORDER BY run_id LIMIT $2`,

    // ── per-agent and plane-wide figures ────────────────────────────────────
    /** Per agent name of $2: its slots in the tenant and its settled and held figures of period $3. */
    agentUsage: `SELECT n.agent,
        (SELECT a.running FROM ${s}.quota_agent_figures a WHERE a.tenant = $1 AND a.agent_name = n.agent) AS running,
        q.tokens, q.minor_units,
        least(coalesce(q.held_tokens, 0), ${MAX})::bigint AS held_tokens, least(coalesce(q.held_minor_units, 0), ${MAX})::bigint AS held_minor_units
      FROM unnest($2::text[]) AS n(agent)
      LEFT JOIN ${s}.quota_agent_spent q ON q.tenant = $1 AND q.agent_name = n.agent AND q.period = $3`,
    /** Every tenant's slots, and per agent name of $1 its slots across tenants, in one statement. */
    planeUsage: `SELECT least(coalesce((SELECT sum(f.running) FROM ${s}.quota_figures f), 0), ${MAX})::bigint AS running,
        coalesce((SELECT json_object_agg(n.agent,
                    coalesce((SELECT sum(a.running) FROM ${s}.quota_agent_figures a WHERE a.agent_name = n.agent), 0))
                    FROM unnest($1::text[]) AS n(agent)), '{}'::json) AS agents`,
    selectPlane: `SELECT ceiling_json FROM ${s}.quota_plane WHERE id = 1`,
    /** Taken before the plane ceiling changes: waits for every decision made on the ceiling as it stood. */
    lockPlaneCeiling: `SELECT ${s}.quota_set_plane_lock()`,
    /** What a batch that reads the plane ceiling holds (shared), taken first by a transaction that locks a tenant before its batch. */
    sharePlaneCeiling: `SELECT pg_advisory_xact_lock_shared(hashtextextended('${s}.quota-plane-ceiling', 3))`,
    upsertPlane: `INSERT INTO ${s}.quota_plane (id, ceiling_json) VALUES (1, $1::jsonb)
      ON CONFLICT (id) DO UPDATE SET ceiling_json = excluded.ceiling_json`,
    /** The plane-wide halt (docs/design/rules.md#c49), at most one row. */
    selectPlaneHalt: `SELECT reason, by_actor, by_basis, at_ms, reaches_running FROM ${s}.quota_plane_halt WHERE id = 1`,
    /** Throws or re-throws the plane-wide halt; run after lockPlaneCeiling (docs/design/rules.md#c52). */
    upsertPlaneHalt: `INSERT INTO ${s}.quota_plane_halt (id, reason, by_actor, by_basis, at_ms, reaches_running)
      VALUES (1, $1, $2, $3, $4, $5)
      ON CONFLICT (id) DO UPDATE SET reason = excluded.reason, by_actor = excluded.by_actor, by_basis = excluded.by_basis,
        at_ms = excluded.at_ms, reaches_running = excluded.reaches_running`,
    /** Removes the plane-wide halt only if it is still the one read; run after lockPlaneCeiling. */
    deletePlaneHaltIfSame: `DELETE FROM ${s}.quota_plane_halt
      WHERE id = 1 AND reason = $1 AND by_actor = $2 AND by_basis = $3 AND at_ms = $4 AND reaches_running = $5`,

    // ── settled totals and holds ────────────────────────────────────────────
    selectSpent: `SELECT tokens, minor_units FROM ${s}.quota_spent WHERE tenant = $1 AND period = $2`,
    /** The period's hold sums, kept as counters beside the holds. */
    sumReserved: `SELECT least(coalesce(sum(held_tokens), 0), ${MAX})::bigint AS tokens,
        least(coalesce(sum(held_minor_units), 0), ${MAX})::bigint AS minor_units
      FROM ${s}.quota_spent WHERE tenant = $1 AND period = $2`,
    listHolds: `SELECT run_id, period, tokens, minor_units FROM ${s}.quota_reserved
      WHERE tenant = $1 ORDER BY run_id LIMIT $2`,

    // ── halts ───────────────────────────────────────────────────────────────
    /** Every standing halt in one read, bytewise by scope key ("C" collation; docs/design/rules.md#c23). */
    listHalts: `SELECT scope, reason, by_actor, by_basis, at_ms, reaches_running FROM ${s}.quota_halted WHERE tenant = $1 ORDER BY scope`,
    /** A re-throw replaces the row, never appends (docs/design/rules.md#c22). */
    upsertHalt: `INSERT INTO ${s}.quota_halted AS h (tenant, scope, reason, by_actor, by_basis, at_ms, reaches_running)
      VALUES ($1, $2, $3, $4, $5, $6, $7)
      ON CONFLICT (tenant, scope) DO UPDATE SET
        reason = excluded.reason, by_actor = excluded.by_actor, by_basis = excluded.by_basis, at_ms = excluded.at_ms,
        reaches_running = excluded.reaches_running`,
    deleteHalt: `DELETE FROM ${s}.quota_halted WHERE tenant = $1 AND scope = $2`,
    selectHalt: `SELECT scope, reason, by_actor, by_basis, at_ms, reaches_running FROM ${s}.quota_halted WHERE tenant = $1 AND scope = $2`,

    // ── tenant quotas ───────────────────────────────────────────────────────
    selectQuota: `SELECT quota_json FROM ${s}.quota_tenants WHERE tenant = $1`,
    upsertQuota: `INSERT INTO ${s}.quota_tenants (tenant, quota_json) VALUES ($1, $2::jsonb)
      ON CONFLICT (tenant) DO UPDATE SET quota_json = excluded.quota_json`,

    // ── run registry, leases, the sweep and the operator listings (postgres-lease-queries.ts) ──
    ...postgresLeaseQueries(s),

    // ── audit log ───────────────────────────────────────────────────────────
    /** Appends of one tenant serialise on this lock (seed 3, with its own key prefix: apart from the admission and migration locks). */
    lockAudit: `SELECT pg_advisory_xact_lock(hashtextextended('${s}.quota-audit:' || octet_length($1::text) || ':' || $1::text, 3))`,
    selectAuditHead: `SELECT seq, hash FROM ${s}.quota_audit WHERE tenant = $1 ORDER BY seq DESC LIMIT 1`,
    insertAudit: `INSERT INTO ${s}.quota_audit
      (tenant, seq, at_ms, actor, basis, action, subject, detail_json, prev_hash, hash)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    listAudit: `SELECT seq, at_ms, actor, basis, action, subject, detail_json, hash FROM ${s}.quota_audit
      WHERE tenant = $1 ORDER BY seq DESC LIMIT $2`,
    /** Audit rows after a sequence number, oldest first: one page of the chain to verify. */
    /** Events after a position, oldest first (port/events.ts `eventsAfter`). */
    eventsAfter: `SELECT seq, id, event_key, tenant, type, at_ms, data_json FROM ${s}.quota_events
      WHERE seq > $1 ORDER BY seq LIMIT $2`,
    tenantEventsAfter: `SELECT seq, id, event_key, tenant, type, at_ms, data_json FROM ${s}.quota_events
      WHERE tenant = $3 AND retired_by = 0 AND seq > $1 ORDER BY seq LIMIT $2`,
    /** The newest events, newest first (port/events.ts `newestEvents`). */
    newestEvents: `SELECT seq, id, event_key, tenant, type, at_ms, data_json FROM ${s}.quota_events ORDER BY seq DESC LIMIT $1`,
    tenantNewestEvents: `SELECT seq, id, event_key, tenant, type, at_ms, data_json FROM ${s}.quota_events
      WHERE tenant = $2 AND retired_by = 0 ORDER BY seq DESC LIMIT $1`,
    listAuditChain: `SELECT seq, at_ms, actor, basis, action, subject, detail_json, hash FROM ${s}.quota_audit
      WHERE tenant = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    listAuditByAction: `SELECT seq, at_ms, actor, basis, action, subject, detail_json, hash FROM ${s}.quota_audit
      WHERE tenant = $1 AND action = $3 ORDER BY seq DESC LIMIT $2`,

    // ── store-wide ──────────────────────────────────────────────────────────
    /** Every known tenant (rules.md#l95, known-tenants.ts); UNION dedupes, "C" sorts bytewise. */
    listTenants: listTenantsSql(`${s}.`),
    listAuditChains: auditChainsSql(`${s}.`),
    /** Whether the store holds a record of each kind that makes tenant $1 known: one indexed EXISTS per kind. */
    tenantRecords: tenantRecordsSql(`${s}.`, '$1'),
  } as const;
}

/** The statements of one store. */
export type PostgresQueries = ReturnType<typeof postgresQueries>;
