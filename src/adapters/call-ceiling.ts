import { describe, isAmount } from '../core/amounts.js';
import { MAX_CALL_LEASE_MS, MIN_CALL_LEASE_MS } from '../core/call-ceilings.js';
import type { Clock } from '../core/clock.js';
import { invalidArgument, isQuotaError, QuotaError } from '../core/errors.js';
import { requireIdentifier, requireTenant } from '../core/identifiers.js';
import type { CallEnded, ReserveCallOutcome } from '../core/lifecycle/model-calls.js';
import type { AdjustCallInput, ReleaseCallInput, ReserveCallInput } from '../plane/model-calls.js';
import { costOf, dearestPerMillion, parsePriceTable, type ModelPrice, type PriceTable, type TokenCounts } from './model-price.js';
import { ModelCallLimitedError } from './run-errors.js';

// What the AI SDK middleware and the Agents SDK model wrapper share to meter each model call
// against the tenant's model-call ceilings (docs/design/rules.md#m3–#m7): reserve the call's worst
// case before it, book what it reported after it, give it back when it threw.

/**
 * The three model-call verbs the ceiling adapters call, with the plane's own shapes: both the
 * in-process plane (`createPlane`) and the HTTP client (`createClient`) satisfy it as they are.
 */
export interface CallCeilingPlane {
  reserveCall(input: ReserveCallInput): Promise<ReserveCallOutcome>;
  adjustCall(input: AdjustCallInput): Promise<CallEnded>;
  releaseCall(input: ReleaseCallInput): Promise<CallEnded>;
}

/**
 * Options shared by `callCeilingMiddleware` (AI SDK) and `meterModelCalls` (Agents SDK):
 * - `plane`: the plane or the HTTP client ({@link CallCeilingPlane});
 * - `tenant` (required), `agent`, `endUser`: whom every call is for (the ceilings that cover it);
 * - `prices`: the price of each model by id, in minor units per million tokens (see `ModelPrice`).
 *   A priced call reserves its worst-case cost (every token it may use at the model's dearest
 *   rate, rounded up, priced by the plane: `minorUnitsPerMillionTokens`) and books its reported
 *   cost; an unpriced one declares no cost, which the plane refuses with `INVALID_ARGUMENT` naming
 *   `maxMinorUnits` when a minor-unit ceiling covers it. A call that declares no output cap, priced
 *   or not, is reserved at the tenant's `defaultMaxOutputTokens` and capped at it;
 * - `leaseMs`: how long a call may stay in flight before the plane books its worst case as an
 *   estimate (1 000 … 86 400 000); default the tenant's, else 15 minutes;
 * - `clock`: where `retryAfterMs` of a refusal is measured from; default the wall clock;
 * - `onBookingError(error)`: called when booking or releasing a call fails after the model was
 *   called (the model's answer, or its own error, still comes out; the reservation is then booked
 *   at its worst case when its lease lapses); default `process.emitWarning`.
 */
export interface CallCeilingOptions {
  readonly plane: CallCeilingPlane;
  readonly tenant: string;
  readonly agent?: string | undefined;
  readonly endUser?: string | undefined;
  readonly prices?: PriceTable | undefined;
  readonly leaseMs?: number | undefined;
  readonly clock?: Clock | undefined;
  readonly onBookingError?: ((error: unknown) => void) | undefined;
}

/** {@link CallCeilingOptions} validated once, when an adapter is made. */
export interface CallCeiling {
  readonly plane: CallCeilingPlane;
  readonly tenant: string;
  readonly agent: string | undefined;
  readonly endUser: string | undefined;
  readonly prices: PriceTable;
  readonly leaseMs: number | undefined;
  readonly clock: Clock;
  readonly onBookingError: (error: unknown) => void;
}

const WALL_CLOCK: Clock = { nowMs: () => Date.now() };

/** The options every model-call wrapper takes ({@link CallCeilingOptions}). */
const CALL_CEILING_OPTIONS = ['plane', 'tenant', 'agent', 'endUser', 'prices', 'leaseMs', 'clock', 'onBookingError'];

/**
 * Validates {@link CallCeilingOptions} and a wrapper's `ownOptions` (the names of its own members);
 * throws `INVALID_ARGUMENT` naming the bad member, or a member that is no option.
 */
export function parseCallCeilingOptions(options: CallCeilingOptions, ownOptions: readonly string[] = []): CallCeiling {
  if (typeof options !== 'object' || options === null) throw invalidArgument('options', `must be { plane, tenant, … }, got ${describe(options)}`);
  // A misspelt or retired option (`endUserId`, `defaultMaxOutputTokens`) would otherwise change nothing, silently.
  const known = [...CALL_CEILING_OPTIONS, ...ownOptions];
  for (const [name, value] of Object.entries(options)) {
    if (value !== undefined && !known.includes(name)) throw invalidArgument(name, `is not an option; the options are ${known.join(', ')}`);
  }
  const plane = options.plane as Partial<CallCeilingPlane> | undefined;
  if (typeof plane?.reserveCall !== 'function' || typeof plane.adjustCall !== 'function' || typeof plane.releaseCall !== 'function') {
    throw invalidArgument('plane', 'must have reserveCall, adjustCall and releaseCall (createPlane or createClient)');
  }
  // The plane's own bounds on a call's lease (src/plane/model-calls.ts), checked once here.
  const lease = (value: unknown): number | undefined => {
    if (value === undefined) return undefined;
    if (!isAmount(value) || value < MIN_CALL_LEASE_MS || value > MAX_CALL_LEASE_MS) {
      throw invalidArgument('leaseMs', `must be a whole number of milliseconds from ${MIN_CALL_LEASE_MS} to ${MAX_CALL_LEASE_MS}, got ${describe(value)}`);
    }
    return value;
  };
  return {
    plane: options.plane,
    tenant: requireTenant('tenant', options.tenant),
    agent: options.agent === undefined ? undefined : requireIdentifier('agent', options.agent),
    endUser: options.endUser === undefined ? undefined : requireIdentifier('endUser', options.endUser),
    prices: parsePriceTable(options.prices),
    leaseMs: lease(options.leaseMs),
    clock: options.clock ?? WALL_CLOCK,
    onBookingError: options.onBookingError ?? ((error: unknown) => process.emitWarning(`quotaplane could not book a model call: ${String(error)}`)),
  };
}

/**
 * One model call reserved under the ceilings: `maxOutputTokens`, the cap to ask the model for (never
 * more than was reserved), and its ends, exactly one of which counts (later ones do nothing):
 * - `finish(counts)` books the reported usage (tokens, and its cost at the model's price);
 *   `finish(undefined)` books the worst case, marked as an estimate (no usage report: a stream
 *   aborted, cancelled or errored mid-way);
 * - `release()` gives the reservation back: the call threw, nothing is booked.
 * Neither throws: a failure goes to `onBookingError`.
 */
export interface CeilingCall {
  readonly callId: string;
  readonly maxOutputTokens: number;
  finish(counts: TokenCounts | undefined): Promise<void>;
  release(): Promise<void>;
}

/**
 * Reserves a call of `model` with `inputTokens` (counted or estimated, a non-negative safe integer)
 * and the cap it asks for (`requestedMaxOutputTokens`; absent, the plane reserves the tenant's
 * `defaultMaxOutputTokens` and answers it as `maxOutputTokens`). A priced model sends its dearest
 * rate, never a precomputed cost, so the plane prices whichever cap it reserves (docs/design/rules.md#m5).
 * A refusal throws {@link ModelCallLimitedError} (the model must not be called); a fault of the
 * plane (`INVALID_ARGUMENT`, an unreachable service) is thrown as it is.
 */
export async function reserveCeilingCall(
  ceiling: CallCeiling,
  model: string,
  inputTokens: number,
  requestedMaxOutputTokens: number | undefined,
): Promise<CeilingCall> {
  if (!isAmount(inputTokens)) throw invalidArgument('countInputTokens', `must answer a non-negative whole number of tokens, got ${describe(inputTokens)}`);
  const price: ModelPrice | undefined = Object.hasOwn(ceiling.prices, model) ? ceiling.prices[model] : undefined;
  const answer = await reserveOrExplain(ceiling, model, price, {
    tenant: ceiling.tenant,
    model,
    ...(ceiling.agent === undefined ? {} : { agent: ceiling.agent }),
    ...(ceiling.endUser === undefined ? {} : { endUser: ceiling.endUser }),
    inputTokens,
    ...(requestedMaxOutputTokens === undefined ? {} : { maxOutputTokens: requestedMaxOutputTokens }),
    ...(price === undefined ? {} : { minorUnitsPerMillionTokens: dearestPerMillion(price) }),
    ...(ceiling.leaseMs === undefined ? {} : { leaseMs: ceiling.leaseMs }),
  });
  if (!answer.ok) throw new ModelCallLimitedError(model, answer.refusal, ceiling.clock.nowMs());
  const { callId, maxOutputTokens } = answer.call;
  let ended = false;
  const end = async (verb: () => Promise<unknown>) => {
    if (ended) return;
    ended = true;
    try {
      await verb();
    } catch (error) {
      ceiling.onBookingError(error);
    }
  };
  return {
    callId,
    maxOutputTokens,
    finish: (counts) =>
      end(() =>
        ceiling.plane.adjustCall({
          tenant: ceiling.tenant,
          callId,
          ...(counts === undefined
            ? {}
            : { usage: { inputTokens: counts.input, outputTokens: counts.output, ...(price === undefined ? {} : { minorUnits: costOf(price, counts) }) } }),
        }),
      ),
    release: () => end(() => ceiling.plane.releaseCall({ tenant: ceiling.tenant, callId })),
  };
}

/**
 * `plane.reserveCall`, with the plane's `INVALID_ARGUMENT` for a missing `maxMinorUnits` said in the
 * adapter's own terms: the caller has no `maxMinorUnits` to give, but `prices` lacks the model.
 */
async function reserveOrExplain(ceiling: CallCeiling, model: string, price: ModelPrice | undefined, input: ReserveCallInput): Promise<ReserveCallOutcome> {
  try {
    return await ceiling.plane.reserveCall(input);
  } catch (error) {
    if (price === undefined && isQuotaError(error) && error.code === 'INVALID_ARGUMENT' && error.details.field === 'maxMinorUnits') {
      throw new QuotaError(
        'INVALID_ARGUMENT',
        `prices: has no price for model '${model}', but ${error.message.replace(/^maxMinorUnits: /, '')}; give prices[${JSON.stringify(model)}] (minor units per million tokens) so each call reserves its worst-case cost`,
        { details: { field: 'prices', model }, cause: error },
      );
    }
    throw error;
  }
}
