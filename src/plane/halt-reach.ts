import { haltCovers, haltReachesRunning, type Halt, type HaltScope } from '../core/halt-scope.js';
import type { TenantStore } from '../store/store.js';
import type { HaltReach } from './plane.js';
import { storeCall } from './store-call.js';

/** How many running runs one page of the registry holds while a halt's reach is counted. */
const PAGE = 500;

/**
 * What a halt reaches (docs/design/rules.md#l46, #l47, #c44): a subject halt, or one thrown with
 * `reachesRunning`, reaches running work as well as admission; any other stops admission only.
 */
export function haltReach(halt: Pick<Halt, 'scope' | 'reachesRunning'>): HaltReach {
  return haltReachesRunning(halt as Halt) ? 'admission and running work' : 'admission';
}

/**
 * The runs of one tenant whose status is `running` and that `scope` covers (its agent, revision or
 * chain; every run for a tenant or plane halt), read page by page from the run registry
 * (docs/design/rules.md#c45). An operator's count, read after the halt stands: a run admitted or
 * paused meanwhile may or may not be counted, and the halt covers it all the same.
 */
export async function runningInScope(handle: TenantStore, scope: HaltScope): Promise<number> {
  let count = 0;
  let after: string | undefined;
  for (;;) {
    const page = await storeCall('runs', () => handle.runs({ statuses: ['running'], after, limit: PAGE }));
    for (const run of page) if (haltCovers(scope, { agent: run.agent ?? undefined, chain: run.chain ?? undefined })) count += 1;
    if (page.length < PAGE) return count;
    after = page[page.length - 1]?.run;
  }
}
