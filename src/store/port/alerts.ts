import type { TenantScoped } from './tenant-scoped.js';

/**
 * Spend alerts fired on demand (docs/design/rules.md#e5): when the plane-wide default thresholds
 * change, every tenant that inherits them fires what its settled spend has already passed. Optional
 * so a third-party store keeps compiling; both built-in adapters have it.
 */
export interface TenantAlertsStore extends TenantScoped {
  /**
   * One transaction, under the tenant's write lock: fires the alerts of the tenant's stored quota
   * (none when it has none) that the current period's settled spend is at or past at `atMs`, as a
   * quota set at `atMs` would (core/lifecycle/spend-alerts.ts `alertOnQuota`). One already fired is
   * not written again.
   */
  alertNow?(atMs: number): Promise<void>;
}
