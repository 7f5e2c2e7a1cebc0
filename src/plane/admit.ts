import { parseBudget } from '../core/budget.js';
import { normaliseRunId, requireTenant } from '../core/identifiers.js';
import { refuse } from '../core/refusal.js';
import type { AdmitInput, AdmitResult } from './plane.js';
import { instantOf, leaseOf, type PlaneContext } from './plane-context.js';
import { parseAgent, parseChain, parseWidth, requireRecord } from './plane-input.js';
import { storeCall, tenantHandle } from './store-call.js';

/**
 * `Plane.admit`: validates every field, names the run, and hands the whole decision to one store
 * transaction (halts → hold formula → reserve → run and pass 1 recorded; DESIGN.md decision 6).
 * Deciding inside the store rather than here is what keeps it exact when instances race: a halt
 * read or a count taken in the plane would be stale by the time the slot is inserted.
 */
export async function admit(context: PlaneContext, input: AdmitInput): Promise<AdmitResult> {
  const request = requireRecord('request', input);
  const tenant = requireTenant('tenant', request.tenant);
  const agent = parseAgent(request.agent);
  const chain = parseChain(request.chain);
  const budget = parseBudget(request.budget, 'budget');
  const width = parseWidth(request.width);
  const atMs = instantOf(context, request.atMs);
  const leaseMs = leaseOf(context, request.leaseMs);
  const run = request.run === undefined ? context.newRunId(atMs) : normaliseRunId('run', request.run);

  const outcome = await storeCall('admit', () =>
    tenantHandle(context.store, tenant).admit({ run, agent, chain, budget, width, atMs, leaseMs }),
  );
  return outcome.ok ? outcome : refuse(outcome.refusal);
}
