import type { Period } from '../core/period.js';
import { requireTenant } from '../core/identifiers.js';
import { UNLIMITED_QUOTA, type TenantQuota } from '../core/quota.js';
import { recentPeriodKeys } from '../core/recent-periods.js';
import type { Spend } from '../core/spend.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireObject } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';

/** Periods a spend-history read covers when the caller names no count: 12. */
export const DEFAULT_HISTORY_PERIODS = 12;

/**
 * A spend-history question: `tenant`; `periods`, how many billing periods ending with the current
 * one (1 … 36, default {@link DEFAULT_HISTORY_PERIODS}); `atMs`, the instant whose period is the
 * last (Unix ms, default the plane clock).
 */
export interface SpendHistoryInput {
  readonly tenant: string;
  readonly periods?: number | undefined;
  readonly atMs?: number | undefined;
}

/** One billing period of a spend history: its key, what was settled in it and what open runs hold against it. */
export interface PeriodSpend {
  readonly period: string;
  readonly spent: Spend;
  readonly reserved: Spend;
}

/**
 * A tenant's spend over recent billing periods, oldest first. `periodKind` is the kind of the
 * tenant's quota now (`monthly` when none is set), which decides the keys; figures of a month
 * include its days (docs/design/decisions.md "Period figures are lossless"). `quota` is the stored
 * quota or `null`.
 */
export interface SpendHistory {
  readonly tenant: string;
  readonly periodKind: Period;
  readonly periods: readonly PeriodSpend[];
  readonly quota: TenantQuota | null;
}


/**
 * `Plane.spendHistory`: read-only; one quota read, then two reads per period (settled and held),
 * each its own store call, so under traffic each figure is true but they are not one snapshot.
 */
export async function spendHistory(context: PlaneContext, input: SpendHistoryInput): Promise<SpendHistory> {
  const request = requireObject('request', input);
  const tenant = requireTenant('tenant', request.tenant);
  const count = request.periods === undefined ? DEFAULT_HISTORY_PERIODS : (request.periods as number);
  const atMs = instantOf(context, request.atMs);

  const handle = tenantHandle(context.store, tenant);
  const quota = await storeCall('getQuota', () => handle.getQuota());
  const periodKind = (quota ?? UNLIMITED_QUOTA).period;
  const keys = recentPeriodKeys(periodKind, atMs, count);
  const periods: PeriodSpend[] = [];
  for (const period of keys) {
    const spent = await storeCall('spent', () => handle.spent(period));
    const reserved = await storeCall('reserved', () => handle.reserved(period));
    periods.push({ period, spent, reserved });
  }
  return { tenant, periodKind, periods, quota };
}
