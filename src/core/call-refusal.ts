import { describeCallCeiling, type CallCeiling, type CallUnit } from './call-ceilings.js';

/**
 * A model call refused because a ceiling covering it is full now (docs/design/rules.md#m3): HTTP 429.
 * - `subject`: whose ceiling (`tenant`, `agent:<name>`, `model:<id>`, `group:<name>`, `user:<id>`);
 * - `counted`: what the window or period already counts (booked); `held`: the worst cases of calls
 *   in flight; `requested`: this call's worst case; all in the ceiling's unit;
 * - `retryAtMs`: when to ask again. `retryAfter` says what it rests on: `window` (booked usage
 *   leaves the window then: exact, unless more is booked meanwhile), `period` (the period resets),
 *   or `in-flight` (the calls in flight alone leave no room; the earliest of them must end or be
 *   booked by then).
 */
export interface CallLimitedRefusal {
  readonly code: 'CallLimited';
  readonly tenant: string;
  readonly subject: string;
  readonly ceiling: CallCeiling;
  readonly counted: number;
  readonly held: number;
  readonly requested: number;
  readonly retryAtMs: number;
  readonly retryAfter: 'window' | 'period' | 'in-flight';
}

/**
 * A model call whose worst case alone is more than a covering ceiling's limit, so it can never fit
 * and waiting is no use (docs/design/rules.md#m4): HTTP 422. Lower the call's output cap (or the
 * tenant's `defaultMaxOutputTokens`), or raise the ceiling.
 */
export interface CallNeverFitsRefusal {
  readonly code: 'CallNeverFits';
  readonly tenant: string;
  readonly subject: string;
  readonly ceiling: CallCeiling;
  readonly requested: number;
}

/** Why a model call was not admitted. */
export type CallRefusal = CallLimitedRefusal | CallNeverFitsRefusal;

/** The sentence a caller reads for `refusal`: which ceiling, the figures, and what to do. */
export function callRefusalMessage(refusal: CallRefusal): string {
  const ceiling = describeCallCeiling(refusal.ceiling);
  const whose = refusal.subject === 'tenant' ? `tenant '${refusal.tenant}'` : `${refusal.subject} of tenant '${refusal.tenant}'`;
  if (refusal.code === 'CallNeverFits') {
    return `model call can never fit: it may use ${amountOf(refusal.requested, refusal.ceiling.unit)}, more than the ceiling of ${whose} (${ceiling}) allows at all; ${NEVER_FITS_ADVICE[refusal.ceiling.unit]}`;
  }
  const when = new Date(refusal.retryAtMs).toISOString();
  const why =
    refusal.retryAfter === 'in-flight'
      ? `calls in flight hold ${refusal.held}; retry once one ends, at the latest ${when}`
      : refusal.retryAfter === 'period'
        ? `the period resets at ${when}`
        : `retry at ${when}, when enough of the window's usage has left it`;
  return `model call refused: the ceiling of ${whose} (${ceiling}) counts ${refusal.counted} booked and ${refusal.held} in flight, and this call may use ${refusal.requested}; ${why}`;
}

// What a caller can change so that a call fits at all: each call counts one request whatever it asks for.
const NEVER_FITS_ADVICE: Readonly<Record<CallUnit, string>> = Object.freeze({
  tokens: "declare a smaller output cap (maxOutputTokens, or the tenant's defaultMaxOutputTokens), send a shorter prompt, or raise the ceiling",
  requests: 'every call counts one request, so no call fits until the ceiling is raised',
  minorUnits: 'declare a smaller worst-case cost (maxMinorUnits, by a smaller output cap), or raise the ceiling',
});

function amountOf(amount: number, unit: CallUnit): string {
  return amount === 1 && unit === 'requests' ? '1 request' : `${amount} ${unit}`;
}
