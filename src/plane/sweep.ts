import type { SweepInput, SweepResult, TenantSweptRun } from './operator-types.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireRecord } from './plane-input.js';
import { storeCall, tenantHandle } from './store-call.js';
import { tenantsInScope } from './tenant-scope.js';

// How many candidates one read asks for; the sweep pages through the rest by run id.
const SWEEP_PAGE = 100;

/**
 * `Plane.sweep` (DESIGN.md decision 8): for each tenant in scope, pages through the runs whose
 * leases lapsed (`lapsedRuns`, by run id, so the walk always ends) and sweeps each in its own
 * store transaction (`sweepRun`), which re-checks the lease first: a heartbeat that lands between
 * the read and the sweep keeps its slot. A sweep that dies halfway has committed the runs it
 * finished and left the rest as they were, for the next sweep to find.
 */
export async function sweep(context: PlaneContext, input: SweepInput = {}): Promise<SweepResult> {
  const request = requireRecord('request', input);
  const atMs = instantOf(context, request.atMs);
  const tenants = await tenantsInScope(context, request.tenant);
  const swept: TenantSweptRun[] = [];
  for (const tenant of tenants) {
    const handle = tenantHandle(context.store, tenant);
    let after: string | undefined;
    for (;;) {
      const page = await storeCall('lapsedRuns', () => handle.lapsedRuns({ atMs, after, limit: SWEEP_PAGE }));
      for (const run of page) {
        const outcome = await storeCall('sweepRun', () => handle.sweepRun({ run, atMs }));
        if (outcome.releasedSlot || outcome.stranded) swept.push({ tenant, ...outcome });
      }
      if (page.length < SWEEP_PAGE) break;
      after = page[page.length - 1];
    }
  }
  return { atMs, swept };
}
