import { normaliseRunId, requireTenant } from '../core/identifiers.js';
import { parseOperator } from '../core/operator.js';
import type { ReleaseRunOutcome } from '../store/types.js';
import type { ReleaseInput } from './operator-types.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireObject } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';
import { requireExistingTenant } from './known-tenant.js';

/**
 * `Plane.release`: an operator gives back a run's slot and hold and closes it
 * (docs/design/rules.md#l60). The store does it and appends the `run.release` audit row in one
 * transaction, recording what was held, so the log can say what the release gave back. A tenant
 * that does not exist is refused `NOT_FOUND` first, naming the nearest known tenant
 * (docs/design/rules.md#l95).
 */
export async function release(context: PlaneContext, input: ReleaseInput): Promise<ReleaseRunOutcome> {
  const request = requireObject('request', input);
  const tenant = requireTenant('tenant', request.tenant);
  const run = normaliseRunId('run', request.run);
  const by = parseOperator(request.by, 'by');
  const atMs = instantOf(context, request.atMs);
  await requireExistingTenant(context.store, tenant, 'release', false);
  return storeCall('releaseRun', () => tenantHandle(context.store, tenant).releaseRun({ run, atMs, by }));
}
