import { DEFAULT_ALERT_THRESHOLDS, type AlertThreshold } from './alert-thresholds.js';
import type { PlaneCeiling } from './plane-ceiling.js';
import type { TenantQuota } from './quota.js';

/*
 * Which thresholds a spend ceiling has (docs/design/rules.md#e2): its agent's own, else the
 * tenant's, else the plane-wide default, else 80 % and 100 %.
 */

/**
 * The thresholds that apply to a ceiling of `agent` (`null`: the tenant's own) in `quota`: the
 * agent's own list, else the tenant's, else the plane-wide default, else
 * {@link DEFAULT_ALERT_THRESHOLDS} (docs/design/rules.md#e2).
 */
export function alertThresholdsFor(quota: TenantQuota, agent: string | null, plane: PlaneCeiling | null): readonly AlertThreshold[] {
  if (agent !== null) {
    const own = quota.agents !== undefined && Object.hasOwn(quota.agents, agent) ? quota.agents[agent]?.alertThresholds : undefined;
    if (own !== undefined) return own;
  }
  return quota.alertThresholds ?? plane?.alertThresholds ?? DEFAULT_ALERT_THRESHOLDS;
}

/** Where the thresholds of a ceiling come from: its agent's own list, the tenant's quota, the plane-wide default, or the built-in 80 % and 100 %. */
export type ThresholdSource = 'agent' | 'tenant' | 'plane' | 'default';

/** Where {@link alertThresholdsFor} takes the thresholds of `agent`'s ceilings (`null`: the tenant's own) from. */
export function alertThresholdSource(quota: TenantQuota, agent: string | null, plane: PlaneCeiling | null): ThresholdSource {
  if (agent !== null && quota.agents !== undefined && Object.hasOwn(quota.agents, agent) && quota.agents[agent]?.alertThresholds !== undefined) return 'agent';
  if (quota.alertThresholds !== undefined) return 'tenant';
  return plane?.alertThresholds !== undefined ? 'plane' : 'default';
}

