import type { Span } from '@opentelemetry/api';

import { invalidArgument } from '../core/errors.js';
import { requireIdentifier, requireCustomerTenant, normaliseRunId } from '../core/identifiers.js';
import { parseRateCeilings } from '../core/quota.js';
import { refuse } from '../core/refusal.js';
import type { DispatchInput, DispatchResult } from './plane.js';
import { appliedFor, instantOf, leaseOf, type PlaneContext } from './plane-context.js';
import { requireRequest } from './plane-input.js';
import { requireBoolean, requireEpoch } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';
import { inSpan, setSpanAttribute, setSpanOutcome, SPAN_ATTRIBUTES } from './tracing.js';

// The members of DispatchInput: any other is refused by name (a misspelt member would be ignored).
const DISPATCH_MEMBERS: ReadonlySet<string> = new Set(['tenant', 'run', 'grant', 'dispatch', 'ceilings', 'exempt', 'atMs', 'epoch', 'leaseMs']);

/**
 * `Plane.dispatch`: one rate reservation for a granted tool (docs/design/rules.md#c31–#c34). The
 * store reads the tenant's configured ceilings for the grant in the same transaction and judges
 * them together with the caller's (docs/design/rules.md#l24, #l26), so a quota change applies to
 * the very next dispatch. The same transaction reads the halts, so a subject halt withholds the
 * very next dispatch (docs/design/rules.md#l47), and, given the pass's `epoch`, renews its lease
 * (#l45). Traced as `quotaplane.dispatch` (tracing.ts).
 */
export function dispatch(context: PlaneContext, input: DispatchInput): Promise<DispatchResult> {
  return inSpan('quotaplane.dispatch', (span) => dispatchInSpan(context, input, span));
}

async function dispatchInSpan(context: PlaneContext, input: DispatchInput, span: Span): Promise<DispatchResult> {
  const request = requireRequest(input, DISPATCH_MEMBERS);
  const tenant = requireCustomerTenant('tenant', request.tenant);
  const run = normaliseRunId('run', request.run);
  const grant = requireIdentifier('grant', request.grant);
  setSpanAttribute(span, SPAN_ATTRIBUTES.tenant, tenant);
  setSpanAttribute(span, SPAN_ATTRIBUTES.run, run);
  setSpanAttribute(span, SPAN_ATTRIBUTES.grant, grant);
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
  setSpanOutcome(span, outcome.ok ? 'counted' : 'refused', outcome.ok ? undefined : outcome.refusal.code);
  return outcome.ok ? { ok: true } : refuse(outcome.refusal);
}
