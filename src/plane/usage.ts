import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { requireTenant } from '../core/identifiers.js';
import { isPeriodKey, periodEndMs, periodKey } from '../core/period.js';
import { UNLIMITED_QUOTA } from '../core/quota.js';
import type { Usage, UsageInput } from './plane.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireObject } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';

/**
 * `Plane.usage`: a tenant's figures for one period, its waiting queue, and each agent's where the
 * quota sets agent ceilings. Read-only, five or six reads; the period defaults to
 * the one the tenant's quota (monthly when none is set) assigns to the plane clock's now.
 */
export async function usage(context: PlaneContext, input: UsageInput): Promise<Usage> {
  const request = requireObject('request', input);
  const tenant = requireTenant('tenant', request.tenant);
  if (request.period !== undefined && !isPeriodKey(request.period)) {
    throw invalidArgument('period', `must be a period key YYYY-MM or YYYY-MM-DD, got ${describe(request.period)}`);
  }
  // A day the calendar does not have (2026-02-31) holds nothing and never will: refused, not answered with zeros.
  if (request.period !== undefined) periodEndMs(request.period);

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
  const agentCeilings = quota?.agents ?? {};
  const names = Object.keys(agentCeilings);
  const agentUsage = handle.agentUsage?.bind(handle);
  if (names.length === 0 || agentUsage === undefined) return { tenant, period, spent, reserved, running, quota, queue };
  const figures = await storeCall('agentUsage', () => agentUsage(names, period));
  const agents = figures.map((figure) => ({
    agent: figure.agent,
    running: figure.running,
    spent: figure.settled,
    reserved: figure.reserved,
    ceilings: agentCeilings[figure.agent] ?? {},
  }));
  return { tenant, period, spent, reserved, running, quota, queue, agents };
}
