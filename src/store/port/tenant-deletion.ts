import type { AuditRecord } from '../../core/lifecycle/types.js';
import type { Operator } from '../../core/operator.js';
import type { TenantScoped } from './tenant-scoped.js';

/** A tenant's deletion: who, when (`atMs`, Unix ms) and why. */
export interface DeleteTenantRequest {
  readonly atMs: number;
  readonly by: Operator;
  readonly reason: string;
}

/** What a deletion did: the audit row it appended, and the ids of the tenant's own API keys it removed. */
export interface DeleteTenantOutcome {
  readonly audit: AuditRecord;
  readonly keys: readonly string[];
}

/**
 * Deleting the tenant (docs/design/rules.md#l95-4–#l95-7). Optional so a third-party store keeps
 * compiling; both built-in adapters have it, and the plane refuses a deletion without it.
 */
export interface TenantDeletionStore extends TenantScoped {
  /**
   * One transaction, under the tenant's write lock: reads what stands in the way
   * (`TenantDeletionBlockers`) and throws core's `CONFLICT` when anything does, writing nothing;
   * otherwise removes every row of the tenant but its audit chain (store/tenant-deletion-sql.ts),
   * its own API keys included, and appends `tenant.delete` to its chain.
   */
  deleteTenant?(request: DeleteTenantRequest): Promise<DeleteTenantOutcome>;
}
