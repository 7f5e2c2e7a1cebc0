import { normaliseRunId, requireTenant } from '../core/identifiers.js';
import { parseOperator } from '../core/operator.js';
import type { ReleaseRunOutcome } from '../store/types.js';
import type { ReleaseInput } from './operator-types.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { requireRecord } from './plane-input.js';
import { storeCall, tenantHandle } from './store-call.js';

/**
 * `Plane.release`: an operator gives back a run's slot and hold and closes it
 * (docs/design/rules.md#l60). The store does it and appends the `run.release` audit row in one
 * transaction, recording what was held, so the log can say what the release gave back.
 */
export async function release(context: PlaneContext, input: ReleaseInput): Promise<ReleaseRunOutcome> {
  const request = requireRecord('request', input);
  const tenant = requireTenant('tenant', request.tenant);
  const run = normaliseRunId('run', request.run);
  const by = parseOperator(request.by, 'by');
  const atMs = instantOf(context, request.atMs);
  return storeCall('releaseRun', () => tenantHandle(context.store, tenant).releaseRun({ run, atMs, by }));
}
