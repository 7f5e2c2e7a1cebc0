import type { TenantQuota } from '../../core/quota.js';
import type { AgentUsage, AuditEntry } from '../types.js';
import type { TenantScoped } from './tenant-scoped.js';

/**
 * The tenant's configuration: its stored quota, replaced with its audit row in one transaction,
 * and what each agent named in it uses. Covered by docs/design/rules.md#l10–#l12 (no quota, a
 * changed quota, a quota given with the request), #l28, #l29 (reading and setting it), #l80–#l83
 * (switching period kinds), #k6–#k10 (per-agent ceilings) and #w3 (a raised ceiling grants
 * waiters in the transaction that raises it). Used by the plane's quota reads and writes, usage
 * and spend history, and the rate windows' room.
 */
export interface TenantQuotaStore extends TenantScoped {
  /** The tenant's stored quota, or `null` when none was set (then every ceiling is absent). */
  getQuota(): Promise<TenantQuota | null>;
  /** Replaces the tenant's quota and appends `audit` in the same transaction. */
  setQuota(quota: TenantQuota, audit: AuditEntry): Promise<void>;
  /**
   * Per agent name in `agents`: the slots its runs hold in this tenant, and its settled and
   * reserved spend in `period`. Read-only, one snapshot. Optional for third-party
   * stores; both adapters have it.
   */
  agentUsage?(agents: readonly string[], period: string): Promise<AgentUsage[]>;
}
