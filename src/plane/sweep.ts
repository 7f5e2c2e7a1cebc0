import type { SweepInput, SweepResult, TenantSweptRun, TenantWaiterSweep } from './operator-types.js';
import { MAX_DECISION_WAIT_MS } from '../store/applied-instant.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireObject } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';
import { tenantsInScope } from './tenant-scope.js';

// How many candidates one read asks for; the sweep pages through the rest by run id.
const SWEEP_PAGE = 100;

/**
 * `Plane.sweep` (docs/design/rules.md#l49–#l55): for each tenant in scope, pages through the runs
 * whose leases lapsed (`lapsedRuns`, by run id, so the walk always ends) and sweeps each in its own
 * store transaction (`sweepRun`), which re-checks the lease first: a heartbeat that lands between
 * the read and the sweep keeps its slot. The runs of one page are swept concurrently (each still in
 * its own transaction), so they share the store's group commit. A sweep that dies halfway has
 * committed the runs it finished and left the rest as they were, for the next sweep to find; it
 * fails with the first fault once every run of the page has been answered. Then each tenant's
 * waiting queue is swept (`sweepWaiters`; docs/design/rules.md#w8, #w18): lapsed waiters removed,
 * uncollected grants recovered.
 */
export async function sweep(context: PlaneContext, input: SweepInput = {}): Promise<SweepResult> {
  const request = requireObject('request', input);
  const atMs = instantOf(context, request.atMs);
  const tenants = await tenantsInScope(context, request.tenant);
  // Without a given instant, each sweep transaction reads the plane's clock once it holds the lock,
  // so a waiter it grants leases from then (docs/design/rules.md#l93); a sweep is never refused for
  // waiting.
  const applied = request.atMs === undefined ? { applied: { nowMs: context.applied.nowMs, maxWaitMs: MAX_DECISION_WAIT_MS } } : {};
  const swept: TenantSweptRun[] = [];
  const waiters: TenantWaiterSweep[] = [];
  for (const tenant of tenants) {
    const handle = tenantHandle(context.store, tenant);
    let after: string | undefined;
    for (;;) {
      const page = await storeCall('lapsedRuns', () => handle.lapsedRuns({ atMs, after, limit: SWEEP_PAGE }));
      // The page's runs are swept side by side, so their transactions share the store's group
      // commit (one after another, each would wait for a commit of its own behind the load).
      for (const outcome of await allSettledOrThrow(page.map((run) => storeCall('sweepRun', () => handle.sweepRun({ run, atMs, ...applied }))))) {
        if (outcome.releasedSlot || outcome.stranded) swept.push({ tenant, ...outcome });
      }
      if (page.length < SWEEP_PAGE) break;
      after = page[page.length - 1];
    }
    // Waiters whose callers are gone lose their place; grants nobody collected are given back.
    const queue = await storeCall('sweepWaiters', () => handle.sweepWaiters({ atMs, ...applied }));
    if (queue.expired + queue.recovered + queue.granted > 0) waiters.push({ tenant, ...queue });
  }
  return waiters.length === 0 ? { atMs, swept } : { atMs, swept, waiters };
}

// The values of `calls` in order once every one has settled; else the first fault, still only once
// every one has settled, so no sweep is left running behind a failed one.
async function allSettledOrThrow<T>(calls: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(calls);
  const failed = settled.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}
