import { invalidArgument } from '../core/errors.js';
import { requireIdentifier, requireCustomerTenant, normaliseRunId } from '../core/identifiers.js';
import { parseRateCeilings } from '../core/quota.js';
import { refuse } from '../core/refusal.js';
import type { DispatchInput, DispatchResult } from './plane.js';
import { appliedFor, instantOf, leaseOf, type PlaneContext } from './plane-context.js';
import { requireRequest } from './plane-input.js';
import { requireBoolean, requireEpoch } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';

// The members of DispatchInput: any other is refused by name (a misspelt member would be ignored).
const DISPATCH_MEMBERS: ReadonlySet<string> = new Set(['tenant', 'run', 'grant', 'dispatch', 'ceilings', 'exempt', 'atMs', 'epoch', 'leaseMs']);

/**
 * `Plane.dispatch`: one rate reservation for a granted tool (docs/design/rules.md#c31–#c34). The
 * store reads the tenant's configured ceilings for the grant in the same transaction and judges
 * them together with the caller's (docs/design/rules.md#l24, #l26), so a quota change applies to
 * the very next dispatch. The same transaction reads the halts, so a subject halt withholds the
 * very next dispatch (docs/design/rules.md#l47), and, given the pass's `epoch`, renews its lease
 * (#l45).
 */
export async function dispatch(context: PlaneContext, input: DispatchInput): Promise<DispatchResult> {
  const request = requireRequest(input, DISPATCH_MEMBERS);
  const tenant = requireCustomerTenant('tenant', request.tenant);
  const run = normaliseRunId('run', request.run);
  const grant = requireIdentifier('grant', request.grant);
  const key = requireIdentifier('dispatch', request.dispatch);
  // Omitted ceilings mean the caller declares none: the quota's configured ceilings for the grant still apply.
  const ceilings = request.ceilings === undefined ? [] : parseRateCeilings(request.ceilings, 'ceilings');
  const exempt = request.exempt === undefined ? false : requireBoolean('exempt', request.exempt);
  const atMs = instantOf(context, request.atMs);
  const lease =
    request.epoch === undefined
      ? {}
      : { epoch: requireEpoch('epoch', request.epoch), leaseMs: leaseOf(context, request.leaseMs) };
  if (request.epoch === undefined && request.leaseMs !== undefined) {
    throw invalidArgument('leaseMs', "renews the lease of the pass named by epoch; give epoch too, or drop leaseMs");
  }

  const outcome = await storeCall('dispatch', () =>
    tenantHandle(context.store, tenant).dispatch({ run, grant, dispatch: key, ceilings, exempt, atMs, ...lease, ...appliedFor(context, request.atMs) }),
  );
  return outcome.ok ? { ok: true } : refuse(outcome.refusal);
}
