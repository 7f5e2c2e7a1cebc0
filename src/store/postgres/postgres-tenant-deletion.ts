import { unknownTenantError } from '../../core/known-tenant.js';
import { tenantDeletionAudit, tenantDeletionRefusal } from '../../core/tenant-deletion.js';
import { knownTenantOf } from '../known-tenants.js';
import type { DeleteTenantOutcome, DeleteTenantRequest } from '../port/tenant-deletion.js';
import { appendAuditInTransaction } from './postgres-audit.js';
import type { PostgresConnection } from './postgres-connection.js';
import type { PostgresQueries } from './postgres-queries.js';
import { decodeQuota } from './postgres-rows.js';

interface BlockerRow {
  readonly running: string;
  readonly slots: string;
  readonly holds: string;
  readonly unsettled_passes: string;
  readonly waiting: string;
  readonly uncollected: string;
  readonly open_calls: string;
}

/**
 * store.ts `deleteTenant`, one transaction under the tenant's lock and its model-call lock (the first raises its books'
 * version, so an instance deciding on rows it kept reads them again and finds them gone):
 * `NOT_FOUND` when the tenant does not exist (docs/design/rules.md#l95-7: a deletion that raced
 * another past the caller's check finds nothing to delete), core's refusal when anything still
 * acts or holds spend (#l95-4), else every row of the tenant but its audit chain removed and
 * `tenant.delete` appended to the chain (#l95-5).
 */
export function deleteTenant(db: PostgresConnection, q: PostgresQueries, tenant: string, request: DeleteTenantRequest): Promise<DeleteTenantOutcome> {
  return db.transaction(async (tx) => {
    await tx.rows(q.lockTenant, [tenant]);
    // Its model-call decisions too, so none stores rows of the tenant after they are gone.
    await tx.rows(q.calls.lock, [tenant]);
    const [records] = await tx.rows<Record<string, unknown>>(q.tenantRecords, [tenant]);
    if (!knownTenantOf(records)) throw unknownTenantError(tenant, [], 'delete');
    const [row] = await tx.rows<BlockerRow>(q.tenantDeletion.blockers, [tenant, request.atMs]);
    // count(*) is a bigint, which pg hands over as text.
    const count = (value: string | undefined): number => Number(value ?? 0);
    const refusal = tenantDeletionRefusal(tenant, {
      running: count(row?.running),
      slots: count(row?.slots),
      holds: count(row?.holds),
      unsettledPasses: count(row?.unsettled_passes),
      waiting: count(row?.waiting),
      uncollected: count(row?.uncollected),
      openCalls: count(row?.open_calls),
    });
    if (refusal !== null) throw refusal;
    const [quotaRow] = await tx.rows<{ quota_json: unknown }>(q.selectQuota, [tenant]);
    const quota = quotaRow === undefined ? null : decodeQuota(tenant, quotaRow.quota_json);
    const keys = (await tx.rows<{ key_id: string }>(q.tenantDeletion.keys, [tenant])).map((key) => key.key_id);
    for (const statement of q.tenantDeletion.deleteRows) await tx.run(statement, [tenant]);
    const audit = await appendAuditInTransaction(tx, q, tenant, tenantDeletionAudit({ atMs: request.atMs, by: request.by, reason: request.reason, quota, keys }));
    await tx.run(q.tenantDeletion.retireEvents, [tenant, audit.seq]);
    return { audit, keys };
  });
}
