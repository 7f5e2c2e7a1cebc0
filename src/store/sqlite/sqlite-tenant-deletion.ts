import { unknownTenantError } from '../../core/known-tenant.js';
import { tenantDeletionAudit, tenantDeletionRefusal } from '../../core/tenant-deletion.js';
import { knownTenantOf } from '../known-tenants.js';
import type { DeleteTenantOutcome, DeleteTenantRequest } from '../port/tenant-deletion.js';
import { deleteTenantRowsSql, deletionBlockersSql, retireTenantEventsSql, tenantKeysSql } from '../tenant-deletion-sql.js';
import { appendAuditInTransaction } from './sqlite-audit.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { SELECT_QUOTA, TENANT_RECORDS } from './sqlite-queries.js';
import { decodeQuota } from './sqlite-rows.js';

const BLOCKERS = deletionBlockersSql('', '@tenant', '@atMs');
const TENANT_KEYS = tenantKeysSql('', '@tenant');
// Each names its table right after DELETE FROM, so the connection's write cache is cleared by
// those of cached tables (quotas, halts, waiters) as by any other writer.
const DELETE_ROWS = deleteTenantRowsSql('', '@tenant');
const RETIRE_EVENTS = retireTenantEventsSql('', '@tenant', '@auditSeq');

interface BlockerRow {
  readonly running: number;
  readonly slots: number;
  readonly holds: number;
  readonly unsettled_passes: number;
  readonly waiting: number;
  readonly uncollected: number;
  readonly open_calls: number;
}

/**
 * store.ts `deleteTenant` inside the caller's `BEGIN IMMEDIATE` transaction: `NOT_FOUND` when the
 * tenant does not exist (docs/design/rules.md#l95-7: a deletion that raced another past the
 * caller's check finds nothing to delete), core's refusal when anything still acts or holds spend
 * (#l95-4), else every row of the tenant but its audit chain removed and `tenant.delete` appended
 * to the chain (#l95-5).
 */
export function deleteTenantInTransaction(conn: SqliteConnection, tenant: string, request: DeleteTenantRequest): DeleteTenantOutcome {
  const params = { tenant };
  if (!knownTenantOf(conn.get<Record<string, unknown>>(TENANT_RECORDS, params))) throw unknownTenantError(tenant, [], 'delete');
  const row = conn.get<BlockerRow>(BLOCKERS, { tenant, atMs: request.atMs });
  const refusal = tenantDeletionRefusal(tenant, {
    running: row?.running ?? 0,
    slots: row?.slots ?? 0,
    holds: row?.holds ?? 0,
    unsettledPasses: row?.unsettled_passes ?? 0,
    waiting: row?.waiting ?? 0,
    uncollected: row?.uncollected ?? 0,
    openCalls: row?.open_calls ?? 0,
  });
  if (refusal !== null) throw refusal;
  const quotaRow = conn.get<{ quota_json: string }>(SELECT_QUOTA, params);
  const quota = quotaRow === undefined ? null : decodeQuota(tenant, quotaRow.quota_json);
  const keys = conn.all<{ key_id: string }>(TENANT_KEYS, params).map((key) => key.key_id);
  for (const statement of DELETE_ROWS) conn.run(statement, params);
  const audit = appendAuditInTransaction(conn, tenant, tenantDeletionAudit({ atMs: request.atMs, by: request.by, reason: request.reason, quota, keys }));
  conn.run(RETIRE_EVENTS, { tenant, auditSeq: audit.seq });
  return { audit, keys };
}
