import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { requireTenant } from '../core/identifiers.js';
import { isPeriodKey, periodKey } from '../core/period.js';
import { UNLIMITED_QUOTA } from '../core/quota.js';
import type { Usage, UsageInput } from './plane.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireRecord } from './plane-input.js';
import { storeCall, tenantHandle } from './store-call.js';

/**
 * `Plane.usage`: a tenant's figures for one period. Read-only, five reads (the fifth is the waiting queue, issue 12); the period defaults to
 * the one the tenant's quota (monthly when none is set) assigns to the plane clock's now.
 */
export async function usage(context: PlaneContext, input: UsageInput): Promise<Usage> {
  const request = requireRecord('request', input);
  const tenant = requireTenant('tenant', request.tenant);
  if (request.period !== undefined && !isPeriodKey(request.period)) {
    throw invalidArgument('period', `must be a period key YYYY-MM or YYYY-MM-DD, got ${describe(request.period)}`);
  }

  const handle = tenantHandle(context.store, tenant);
  const quota = await storeCall('getQuota', () => handle.getQuota());
  const period =
    (request.period as string | undefined) ?? periodKey((quota ?? UNLIMITED_QUOTA).period, instantOf(context, undefined));
  const spent = await storeCall('spent', () => handle.spent(period));
  const reserved = await storeCall('reserved', () => handle.reserved(period));
  const running = await storeCall('running', () => handle.running());
  const nowMs = instantOf(context, undefined);
  const waiting = await storeCall('waitQueue', () => handle.waitQueue({ atMs: nowMs }));
  const queue = {
    depth: waiting.depth,
    oldestWaitMs: waiting.oldestEnqueuedAtMs === null ? null : Math.max(0, nowMs - waiting.oldestEnqueuedAtMs),
  };
  return { tenant, period, spent, reserved, running, quota, queue };
}
