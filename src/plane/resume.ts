import { normaliseRunId, requireCustomerTenant } from '../core/identifiers.js';
import { refuse } from '../core/refusal.js';
import type { ResumeInput, ResumeResult } from './plane.js';
import { appliedFor, instantOf, leaseOf, type PlaneContext } from './plane-context.js';
import { requireRequest } from './plane-input.js';
import { storeCall, tenantHandle } from './store-call.js';

// The members of ResumeInput: any other is refused by name (a misspelt member would be ignored).
const RESUME_MEMBERS: ReadonlySet<string> = new Set(['tenant', 'run', 'atMs', 'leaseMs']);

/**
 * `Plane.resume`: a new pass of an admitted run in one store transaction
 * (docs/design/rules.md#l15–#l17). It is never gated by concurrency, spend or workload halts,
 * because the work was admitted already and refusing it would strand a run mid-way. Only a subject
 * halt on the run's chain stops it (`Withheld`, docs/design/rules.md#l47): the authority it would
 * act with was withdrawn. The store carries the hold to the period of `atMs`.
 */
export async function resume(context: PlaneContext, input: ResumeInput): Promise<ResumeResult> {
  const request = requireRequest(input, RESUME_MEMBERS);
  const tenant = requireCustomerTenant('tenant', request.tenant);
  const run = normaliseRunId('run', request.run);
  const atMs = instantOf(context, request.atMs);
  const leaseMs = leaseOf(context, request.leaseMs);

  const outcome = await storeCall('resume', () => tenantHandle(context.store, tenant).resume({ run, atMs, leaseMs, ...appliedFor(context, request.atMs) }));
  return outcome.ok ? outcome : refuse(outcome.refusal);
}
