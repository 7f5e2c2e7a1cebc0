import { normaliseRunId, requireCustomerTenant } from '../core/identifiers.js';
import { refuse } from '../core/refusal.js';
import type { HeartbeatInput, HeartbeatResult } from './plane.js';
import { appliedFor, instantOf, leaseOf, type PlaneContext } from './plane-context.js';
import { requireRequest } from './plane-input.js';
import { requireEpoch } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';

// The members of HeartbeatInput: any other is refused by name (a misspelt member would be ignored).
const HEARTBEAT_MEMBERS: ReadonlySet<string> = new Set(['tenant', 'run', 'epoch', 'atMs', 'leaseMs']);

/**
 * `Plane.heartbeat`: renews a pass's lease in one store transaction
 * (docs/design/rules.md#l42–#l44). The fencing (a newer pass, a settled pass, a stranded run) and
 * the subject-halt check are decided inside that transaction, with the halts read there, so a halt
 * thrown a moment before is seen.
 */
export async function heartbeat(context: PlaneContext, input: HeartbeatInput): Promise<HeartbeatResult> {
  const request = requireRequest(input, HEARTBEAT_MEMBERS);
  const tenant = requireCustomerTenant('tenant', request.tenant);
  const run = normaliseRunId('run', request.run);
  const epoch = requireEpoch('epoch', request.epoch);
  const atMs = instantOf(context, request.atMs);
  const leaseMs = leaseOf(context, request.leaseMs);

  const outcome = await storeCall('heartbeat', () => tenantHandle(context.store, tenant).heartbeat({ run, epoch, atMs, leaseMs, ...appliedFor(context, request.atMs) }));
  return outcome.ok ? outcome : refuse(outcome.refusal);
}
