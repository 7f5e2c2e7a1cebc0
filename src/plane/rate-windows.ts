import { requireTenant } from '../core/identifiers.js';
import { isCountableWindow, type RateCeiling } from '../core/rate.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireObject } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';

/** A rate-window question: `tenant`, and `atMs`, the instant the windows end at (Unix ms, default the plane clock). */
export interface RateWindowsInput {
  readonly tenant: string;
  readonly atMs?: number | undefined;
}

/**
 * One configured rate ceiling of a tenant's quota and its window now: `counted` dispatches of
 * `grant` fall inside the `ceiling.windowSeconds` ending at `atMs` (so `counted ≥ ceiling.count`
 * means it is full), or `null` when the window is one a store cannot count (an old stored quota).
 */
export interface RateWindow {
  readonly grant: string;
  readonly ceiling: RateCeiling;
  readonly counted: number | null;
}

/** The tenant's configured rate ceilings (`quota.rateCeilings`) with their current window counts, by grant then list order. */
export interface RateWindows {
  readonly tenant: string;
  readonly atMs: number;
  readonly windows: readonly RateWindow[];
}

/**
 * `Plane.rateWindows`: read-only. For each configured ceiling it asks the store's `rateRoom` about
 * a probe ceiling of count 1 over the same window: a window holding no dispatch has room, and any
 * other answers `RateLimited` whose `reached` is the true count in that window
 * (docs/design/rules.md#c32, #c33). So no store method is added for this; one read per ceiling.
 */
export async function rateWindows(context: PlaneContext, input: RateWindowsInput): Promise<RateWindows> {
  const request = requireObject('request', input);
  const tenant = requireTenant('tenant', request.tenant);
  const atMs = instantOf(context, request.atMs);
  const handle = tenantHandle(context.store, tenant);
  const quota = await storeCall('getQuota', () => handle.getQuota());
  const windows: RateWindow[] = [];
  for (const [grant, ceilings] of Object.entries(quota?.rateCeilings ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    for (const ceiling of ceilings) {
      if (!isCountableWindow(ceiling)) {
        windows.push({ grant, ceiling: { count: ceiling.count, windowSeconds: ceiling.windowSeconds }, counted: null });
        continue;
      }
      const probe = [{ count: 1, windowSeconds: ceiling.windowSeconds }];
      const outcome = await storeCall('rateRoom', () => handle.rateRoom(grant, probe, atMs));
      const counted = outcome.ok ? 0 : outcome.refusal.code === 'RateLimited' ? outcome.refusal.reached : null;
      windows.push({ grant, ceiling: { count: ceiling.count, windowSeconds: ceiling.windowSeconds }, counted });
    }
  }
  return { tenant, atMs, windows };
}
