import { alertThresholdsFor } from '../alert-threshold-source.js';
import { crossingEvents, type AlertSubject, type AlertThreshold } from '../alert-thresholds.js';
import { periodKey } from '../period.js';
import { agentCeilingsOf, UNLIMITED_QUOTA, type TenantQuota } from '../quota.js';
import type { Spend } from '../spend.js';
import type { TenantBooks } from './books.js';

/*
 * When spend alerts fire (docs/design/rules.md#e2–#e5), decided once for both stores: on an accrual
 * of settled spend, and when a quota is set. The events go into the decision's own transaction
 * through `appendEvent`, which keeps one event per key.
 */

/** An accrual as `accrueSpent` made it: the keys it counted in, the tenant's (and agent's) totals after it, per key. */
export interface Accrual {
  readonly keys: readonly string[];
  readonly totals: readonly Spend[];
  readonly agent: string | null;
  readonly agentTotals: readonly Spend[] | null;
  readonly spend: Spend;
  readonly atMs: number;
}

const UNITS = ['tokens', 'minorUnits'] as const;

// The index in an accrual's keys (month first, then the day when known) of the period the quota's
// ceilings count in: the month, or the day (absent when unknown: nothing to alert on then).
function ceilingKeyIndex(quota: TenantQuota): number {
  return quota.period === 'monthly' ? 0 : 1;
}

function fire(
  books: TenantBooks,
  subject: Omit<AlertSubject, 'unit'>,
  thresholds: readonly AlertThreshold[],
  ceilings: { readonly maxTokensPerPeriod?: number; readonly maxMinorUnitsPerPeriod?: number },
  after: Spend,
  added: Spend,
  atMs: number,
): void {
  for (const unit of UNITS) {
    if (added[unit] === 0) continue;
    const ceiling = unit === 'tokens' ? ceilings.maxTokensPerPeriod : ceilings.maxMinorUnitsPerPeriod;
    for (const event of crossingEvents({ ...subject, unit }, thresholds, ceiling, after[unit] - added[unit], after[unit], atMs)) books.appendEvent(event);
  }
}

/**
 * The alerts an accrual of settled spend crosses (docs/design/rules.md#e3): for the tenant's
 * ceilings and, for a run of an agent the quota names, the agent's, in the period the quota's
 * ceilings count in (the month, or for daily periods the day). Reads the quota, and the plane-wide
 * ceiling only when the quota sets no thresholds of its own.
 */
export function alertOnAccrual(books: TenantBooks, accrual: Accrual): void {
  const quota = books.storedQuota() ?? UNLIMITED_QUOTA;
  const index = ceilingKeyIndex(quota);
  const period = accrual.keys[index];
  const total = accrual.totals[index];
  if (period === undefined || total === undefined) return;
  const plane = quota.alertThresholds === undefined ? books.planeCeiling() : null;
  const tenant = books.tenant;
  fire(books, { tenant, agent: null, period }, alertThresholdsFor(quota, null, plane), quota, total, accrual.spend, accrual.atMs);
  const agent = accrual.agent;
  const ceilings = agentCeilingsOf(quota, agent);
  const agentTotal = accrual.agentTotals?.[index];
  if (agent === null || ceilings === null || agentTotal === undefined) return;
  fire(books, { tenant, agent, period }, alertThresholdsFor(quota, agent, plane), ceilings, agentTotal, accrual.spend, accrual.atMs);
}

/**
 * The alerts a quota set at `atMs` fires at once (docs/design/rules.md#e5): every threshold of the
 * tenant's and its agents' ceilings that the current period's settled spend is already at or past,
 * so a threshold configured (or a ceiling lowered) after usage crossed it fires once, now; one
 * that fired before is kept as it was. Reads the period's settled spend of the tenant and of each
 * agent the quota names.
 */
export function alertOnQuota(books: TenantBooks, quota: TenantQuota, atMs: number): void {
  const period = periodKey(quota.period, atMs);
  const plane = quota.alertThresholds === undefined ? books.planeCeiling() : null;
  const tenant = books.tenant;
  // Settled spend moved from 0 to what it is now: every threshold at or below it is crossed.
  const settled = books.settledIn(period);
  fire(books, { tenant, agent: null, period }, alertThresholdsFor(quota, null, plane), quota, settled, settled, atMs);
  for (const [agent, ceilings] of Object.entries(quota.agents ?? {})) {
    const agentSettled = books.agentPeriodFigures(agent, period).settled;
    fire(books, { tenant, agent, period }, alertThresholdsFor(quota, agent, plane), ceilings, agentSettled, agentSettled, atMs);
  }
}

/**
 * {@link alertOnQuota} for the tenant's stored quota, at `atMs` (store `alertNow`;
 * docs/design/rules.md#e5.1): a tenant without one fires what a settle would fire for it, under the
 * unlimited quota (its absolute thresholds and the plane-wide default).
 */
export function alertOnStoredQuota(books: TenantBooks, atMs: number): void {
  alertOnQuota(books, books.storedQuota() ?? UNLIMITED_QUOTA, atMs);
}
