import { normaliseRunId, requireIdentifier } from '../core/identifiers.js';
import type { PassGrant } from '../store/types.js';
import type { ResumeInput } from './plane.js';
import { instantOf, leaseOf, type PlaneContext } from './plane-context.js';
import { requireRecord } from './plane-input.js';
import { storeCall, tenantHandle } from './store-call.js';

/**
 * `Plane.resume`: a new pass of an admitted run in one store transaction (contract §8.4). It is
 * never gated: no halt, slot or spend check, because the work was admitted already and refusing it
 * would strand a run mid-way. The store carries the hold to the period of `atMs`.
 */
export async function resume(context: PlaneContext, input: ResumeInput): Promise<PassGrant> {
  const request = requireRecord('request', input);
  const tenant = requireIdentifier('tenant', request.tenant);
  const run = normaliseRunId('run', request.run);
  const atMs = instantOf(context, request.atMs);
  const leaseMs = leaseOf(context, request.leaseMs);

  return storeCall('resume', () => tenantHandle(context.store, tenant).resume({ run, atMs, leaseMs }));
}
