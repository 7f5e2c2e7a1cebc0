/*
 * The SQL of a tenant's deletion (docs/design/rules.md#l95-4–#l95-7), the same on both backends
 * but for the schema `prefix` (`` on SQLite, `"s".` on PostgreSQL) and the tenant placeholder
 * (`@tenant`, `$1`). Both adapters build their statements from these, so what a deletion removes
 * cannot drift between them; test/store/tenant-deletion-tables.test.ts holds the lists to each
 * backend's schema, so a table added by a later migration must be named here.
 */

/**
 * Every table whose rows of a tenant its deletion removes: all that hold a record of the tenant
 * (quota, runs and passes, slots, holds, spend, receipts, halts, dispatches, waiters, pruned runs,
 * its own API keys, its own webhook endpoints and their deliveries, its model-call ceilings, meters,
 * usage and reservations).
 */
export const TENANT_DELETED_TABLES: readonly string[] = Object.freeze([
  'quota_tenants',
  'quota_runs',
  'quota_passes',
  'quota_pruned',
  'quota_running',
  'quota_reserved',
  'quota_spent',
  'quota_agent_spent',
  'quota_settled',
  'quota_halted',
  'quota_rate',
  'quota_rate_grants',
  'quota_waiters',
  'quota_wait_turns',
  'quotaplane_api_keys',
  'quotaplane_webhook_endpoints',
  'quotaplane_webhook_deliveries',
  'quota_call_ceilings',
  'quota_call_meters',
  'quota_call_usage',
  'quota_call_reservations',
]);

/**
 * The tables with a tenant column that a deletion keeps: the audit chain (the record of what was
 * done, ending in the deletion's row), the event log (append-only like the chain: its events were
 * already announced, and a cursor or a webhook delivery may still be reading them; they are retired,
 * see {@link retireTenantEventsSql}) and, on PostgreSQL, counters that are no record of the
 * tenant (`quota_figures` and `quota_agent_figures` count slots, 0 once none is held;
 * `quota_book_versions` must never go back, or a kept row could match a version again).
 */
export const TENANT_KEPT_TABLES: readonly string[] = Object.freeze(['quota_audit', 'quota_events', 'quota_figures', 'quota_agent_figures', 'quota_book_versions']);

/**
 * One row of the counts of `TenantDeletionBlockers` (core/tenant-deletion.ts), as columns
 * `running`, `slots`, `holds`, `unsettled_passes`, `waiting`, `uncollected`, `open_calls` (the
 * deletion's instant given by the `atMs` placeholder: a decided waiter counts while its lease runs,
 * an open model call until its deadline, docs/design/rules.md#m7).
 */
export function deletionBlockersSql(prefix: string, tenant: string, atMs: string): string {
  return `SELECT
  (SELECT count(*) FROM ${prefix}quota_runs WHERE tenant = ${tenant} AND status = 'running') AS running,
  (SELECT count(*) FROM ${prefix}quota_running WHERE tenant = ${tenant}) AS slots,
  (SELECT count(*) FROM ${prefix}quota_reserved WHERE tenant = ${tenant} AND (tokens > 0 OR minor_units > 0)) AS holds,
  (SELECT count(*) FROM ${prefix}quota_passes p WHERE p.tenant = ${tenant} AND p.settled_at_ms IS NULL
     AND NOT EXISTS (SELECT 1 FROM ${prefix}quota_runs r WHERE r.tenant = p.tenant AND r.run_id = p.run_id AND r.status IN ('running', 'released'))) AS unsettled_passes,
  (SELECT count(*) FROM ${prefix}quota_waiters WHERE tenant = ${tenant} AND state = 'waiting') AS waiting,
  (SELECT count(*) FROM ${prefix}quota_waiters WHERE tenant = ${tenant} AND state IN ('granted', 'refused') AND lease_expires_at_ms > ${atMs}) AS uncollected,
  (SELECT count(*) FROM ${prefix}quota_call_reservations WHERE tenant = ${tenant} AND status = 'open' AND deadline_ms > ${atMs}) AS open_calls`;
}

/** The ids of the tenant's own API keys, which its deletion removes, in byte order. */
export function tenantKeysSql(prefix: string, tenant: string): string {
  return `SELECT key_id FROM ${prefix}quotaplane_api_keys WHERE tenant = ${tenant} ORDER BY key_id`;
}

/**
 * The statement that retires the tenant's events (`retired_by` the deletion's audit number, given by
 * the `auditSeq` placeholder): the log keeps them, but a tenant made again under the same name is
 * read without them and fires its alerts afresh (docs/design/rules.md#e4).
 */
export function retireTenantEventsSql(prefix: string, tenant: string, auditSeq: string): string {
  return `UPDATE ${prefix}quota_events SET retired_by = ${auditSeq} WHERE tenant = ${tenant} AND retired_by = 0`;
}

/** The statements that remove the tenant's rows, one per table of {@link TENANT_DELETED_TABLES}. */
export function deleteTenantRowsSql(prefix: string, tenant: string): readonly string[] {
  return TENANT_DELETED_TABLES.map((table) => `DELETE FROM ${prefix}${table} WHERE tenant = ${tenant}`);
}
