import type { Span } from '@opentelemetry/api';

import { describe } from '../core/amounts.js';
import { parseBudget } from '../core/budget.js';
import { invalidArgument } from '../core/errors.js';
import { normaliseRunId, requireCustomerTenant } from '../core/identifiers.js';
import { refuse } from '../core/refusal.js';
import type { AdmitInput, AdmitResult } from './plane.js';
import { appliedFor, instantOf, leaseOf, type PlaneContext } from './plane-context.js';
import { parseWidth, requireRequest } from './plane-input.js';
import { requireAgent, requireChain } from '../store/lifecycle-arguments.js';
import { namingUnknownRun, storeCall, tenantHandle } from './store-call.js';
import { inSpan, setSpanAttribute, setSpanOutcome, SPAN_ATTRIBUTES } from './tracing.js';
import { MAX_WAIT_MS, waitForAdmission, WAITER_LEASE_MS } from './wait-admission.js';

// The members of AdmitInput: any other is refused by name (a misspelt member would be ignored).
const ADMIT_MEMBERS: ReadonlySet<string> = new Set(['tenant', 'run', 'agent', 'chain', 'budget', 'width', 'atMs', 'leaseMs', 'waitMs', 'signal']);

/** `waitMs` of an admission: absent = 0 (no waiting), else an integer 0 … `MAX_WAIT_MS`. */
export function parseWaitMs(value: unknown): number {
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_WAIT_MS) {
    throw invalidArgument('waitMs', `must be an integer number of milliseconds from 0 to ${MAX_WAIT_MS}, got ${describe(value)}`);
  }
  return value;
}

/**
 * Why a waiting admission cannot also give its instant (`atMs`): a wait runs in real time from
 * now, and its grant is written at whatever instant the freeing transaction has, so an admission
 * decided "at `atMs`" cannot also wait (a past `atMs` would end the wait at once, a future one
 * would wait wall-clock time for it). `field` is the name of the wait in the caller's API
 * (`waitMs` in the library, `wait` over HTTP). Used in the `INVALID_ARGUMENT` naming that field.
 */
export function waitWithInstantReason(field: string): string {
  return (
    'cannot be combined with atMs: a waiting admission is decided at the instants a slot frees, in real time from now, ' +
    `not at a given instant; leave atMs out to wait, or leave ${field} out (or 0) to be decided at atMs`
  );
}

function parseSignal(value: unknown): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (!(value instanceof AbortSignal)) throw invalidArgument('signal', `must be an AbortSignal, got ${describe(value)}`);
  return value;
}

/**
 * `Plane.admit`: validates every field, names the run, and hands the whole decision to one store
 * transaction (halts → hold formula → reserve → run and pass 1 recorded; docs/design/decisions.md
 * "The order of admission"). Deciding inside the store rather than here is what keeps it exact when
 * instances race: a halt read or a count taken in the plane would be stale by the time the slot is
 * inserted. With `waitMs` (docs/design/rules.md#w1, #w2) a `TooManyRuns` refusal waits in the
 * tenant's queue instead, up to `waitMs` ms, and is admitted by the transaction that frees a slot
 * (`waitForAdmission`). A `STORE_UNAVAILABLE` whose outcome is unknown
 * (`details.outcome = 'unknown'`) names the run id in `details.run` (also one the plane made):
 * retrying with it is answered from the books. Traced as `quotaplane.admit` (tracing.ts).
 */
export function admit(context: PlaneContext, input: AdmitInput): Promise<AdmitResult> {
  return inSpan('quotaplane.admit', (span) => admitInSpan(context, input, span));
}

async function admitInSpan(context: PlaneContext, input: AdmitInput, span: Span): Promise<AdmitResult> {
  const request = requireRequest(input, ADMIT_MEMBERS);
  const tenant = requireCustomerTenant('tenant', request.tenant);
  const agent = requireAgent('agent', request.agent);
  const chain = requireChain('chain', request.chain);
  const budget = parseBudget(request.budget, 'budget');
  const width = parseWidth(request.width);
  const atMs = instantOf(context, request.atMs);
  const leaseMs = leaseOf(context, request.leaseMs);
  const run = request.run === undefined ? context.newRunId(atMs) : normaliseRunId('run', request.run);
  setSpanAttribute(span, SPAN_ATTRIBUTES.tenant, tenant);
  setSpanAttribute(span, SPAN_ATTRIBUTES.run, run);

  const waitMs = parseWaitMs(request.waitMs);
  if (waitMs > 0 && request.atMs !== undefined) throw invalidArgument('waitMs', waitWithInstantReason('waitMs'));
  const signal = parseSignal(request.signal);
  const handle = tenantHandle(context.store, tenant);
  const admission = { run, agent, chain, budget, width, atMs, leaseMs, ...appliedFor(context, request.atMs) };
  try {
    const outcome =
      waitMs === 0
        ? await storeCall('admit', () => handle.admit(admission))
        : await waitForAdmission(context, handle, admission, { untilMs: atMs + waitMs, leaseMs: WAITER_LEASE_MS }, waitMs, signal);
    const result = outcome.ok ? outcome : refuse(outcome.refusal);
    setSpanOutcome(span, result.ok ? 'admitted' : 'refused', result.ok ? undefined : result.refusal.code);
    return result;
  } catch (error) {
    // An outcome the store could not learn is learnt by a retry under the same run id.
    throw namingUnknownRun(error, run);
  }
}
