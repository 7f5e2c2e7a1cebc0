import { requireSumFits, saturatingAdd } from '../amounts.js';
import { DEFAULT_CALL_LEASE_MS, DEFAULT_MAX_OUTPUT_TOKENS, isWindowCeiling, NO_CALL_CEILINGS, type CallCeilings } from '../call-ceilings.js';
import { worstCaseMinorUnits } from '../call-cost.js';
import { callSubjects, coveringCeilings, TENANT_SUBJECT, type CallParties, type CoveringCeiling } from '../call-coverage.js';
import {
  addCallAmounts,
  bookedSince,
  bookedThrough,
  callPruneFloorMs,
  emptyCallMeter,
  isCallPruneDue,
  recordedCallInstantMs,
  subtractCallAmounts,
  type CallAmounts,
  type CallMeter,
} from '../call-meter.js';
import type { CallLimitedRefusal, CallRefusal } from '../call-refusal.js';
import { invalidArgument, QuotaError } from '../errors.js';
import { periodEndMs, periodKey, periodStartMs } from '../period.js';
import type { CallBooks, CallReservation } from './call-books.js';

// The model-call decisions (docs/design/rules.md#m1–#m12), written once against CallBooks: reserve
// a call's worst case against every ceiling covering it, then book what it reported (adjust),
// give it back (release), or book the worst case as an estimate when it never reported.

/**
 * A model call to reserve:
 * - `callId`: the caller's id for the call; a retry with the same id answers the same reservation;
 * - `model`, `agent`, `endUser`: who the call is for ({@link CallParties});
 * - `inputTokens`: the prompt's tokens (counted or estimated by the caller);
 * - `maxOutputTokens`: the call's declared output cap, else the tenant's `defaultMaxOutputTokens`;
 * - `maxMinorUnits`: the call's worst-case cost; or
 * - `minorUnitsPerMillionTokens`: the dearest rate the call's model charges, per million tokens of
 *   any kind: the worst-case cost is then its worst-case tokens at that rate, rounded up, once the
 *   output cap is chosen. One of the two is required when a minor-unit ceiling covers the call;
 * - `leaseMs`: how long it may stay in flight, else the tenant's `leaseMs`, else 15 minutes.
 */
export interface ReserveCallRequest extends CallParties {
  readonly callId: string;
  readonly inputTokens: number;
  readonly maxOutputTokens?: number | undefined;
  readonly maxMinorUnits?: number | undefined;
  readonly minorUnitsPerMillionTokens?: number | undefined;
  readonly leaseMs?: number | undefined;
  readonly atMs: number;
}

/** A reservation made (or, with `retried`, one already made under the same `callId`), or the refusal. */
export type ReserveCallOutcome =
  | { readonly ok: true; readonly call: CallReservation; readonly retried: boolean }
  | { readonly ok: false; readonly refusal: CallRefusal };

/** What a call reported when it ended: its input and output tokens, and its cost in minor units when known. */
export interface CallUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly minorUnits?: number | undefined;
}

/** The end of a call: `usage` as reported, or none (the call ended without a report: its worst case is booked, marked as an estimate). */
export interface AdjustCallRequest {
  readonly callId: string;
  readonly usage?: CallUsage | undefined;
  readonly atMs: number;
}

/** The call as it now stands; `retried` when it had already ended the same way (a retried request). */
export interface CallEnded {
  readonly call: CallReservation;
  readonly retried: boolean;
}

/** Most open reservations past their deadline one decision books as estimates before its own work. */
export const DUE_CALLS_PER_DECISION = 8;

/**
 * Reserves a model call's worst case (docs/design/rules.md#m3–#m6). In order:
 * 1. books up to {@link DUE_CALLS_PER_DECISION} open calls past their deadline as estimates (#m7);
 * 2. a `callId` already reserved and open, asked for the same model, agent, end user and worst
 *    case, answers that reservation again, unjudged (`retried`); asked for anything else, or
 *    already ended, it throws `CONFLICT` (#m6);
 * 3. the worst case is `inputTokens + maxOutputTokens` tokens, 1 request and `maxMinorUnits`, or
 *    those tokens at `minorUnitsPerMillionTokens` (rounded up, at most `MAX_CALL_AMOUNT`); a
 *    minor-unit ceiling covering the call with neither throws `INVALID_ARGUMENT` naming
 *    `maxMinorUnits` (#m11), and both throw it naming `minorUnitsPerMillionTokens`;
 * 4. a ceiling whose limit is 0 or less than the worst case refuses `CallNeverFits`, the first in
 *    coverage order (#m4);
 * 5. a ceiling whose booked usage in its window or period, plus the calls in flight, plus the worst
 *    case passes its limit refuses `CallLimited`: the first such ceiling, with the latest
 *    `retryAtMs` over all of them (#m3);
 * 6. otherwise the worst case is held on every meter the call counts on, and the call is open.
 */
export function decideReserveCall(books: CallBooks, request: ReserveCallRequest): ReserveCallOutcome {
  const rate = request.minorUnitsPerMillionTokens;
  if (rate !== undefined && request.maxMinorUnits !== undefined) {
    throw invalidArgument('minorUnitsPerMillionTokens', 'give either maxMinorUnits (the worst-case cost) or minorUnitsPerMillionTokens (the rate it is priced at), not both');
  }
  expireDueCalls(books, request.atMs);
  const existing = books.reservation(request.callId);
  if (existing !== null && existing.status !== 'open') {
    throw new QuotaError('CONFLICT', `callId: call '${request.callId}' of tenant '${books.tenant}' already ended (${existing.status}); a new call needs a new callId`, {
      details: { field: 'callId', status: existing.status },
    });
  }
  const config = storedCallCeilings(books);
  const maxOutputTokens = request.maxOutputTokens ?? existing?.maxOutputTokens ?? config.defaultMaxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const tokens = saturatingAdd(request.inputTokens, maxOutputTokens);
  // Priced by its rate, the call's worst-case cost follows the output cap just chosen (#m5).
  const maxMinorUnits = request.maxMinorUnits ?? (rate === undefined ? undefined : worstCaseMinorUnits(tokens, rate));
  const reserved: CallAmounts = { tokens, requests: 1, minorUnits: maxMinorUnits ?? 0 };
  if (existing !== null) {
    if (isSameCall(existing, request, reserved)) return { ok: true, call: existing, retried: true };
    throw new QuotaError(
      'CONFLICT',
      `callId: call '${request.callId}' of tenant '${books.tenant}' is in flight as another call (${existing.model}, ${existing.reserved.tokens} tokens reserved); a new call needs a new callId`,
      { details: { field: 'callId', status: existing.status } },
    );
  }
  const subjects = callSubjects(config, request);
  const covering = coveringCeilings(config, subjects);
  if (maxMinorUnits === undefined) {
    const money = covering.find((entry) => entry.ceiling.unit === 'minorUnits');
    if (money !== undefined) {
      throw invalidArgument(
        'maxMinorUnits',
        `a minor-unit ceiling of ${money.subject} covers this call, so the call must declare its worst-case cost in minor units (maxMinorUnits) or the rate it is priced at (minorUnitsPerMillionTokens)`,
      );
    }
  }

  for (const { subject, ceiling } of covering) {
    if (ceiling.limit === 0 || reserved[ceiling.unit] > ceiling.limit) {
      return { ok: false, refusal: { code: 'CallNeverFits', tenant: books.tenant, subject, ceiling, requested: reserved[ceiling.unit] } };
    }
  }

  const meters = new Map<string, CallMeter>();
  books.meters(subjects).forEach((meter, i) => meters.set(subjects[i]!, meter ?? emptyCallMeter(callPruneFloorMs(request.atMs))));
  let refusal: CallLimitedRefusal | null = null;
  let latest: CallLimitedRefusal | null = null;
  for (const entry of covering) {
    const full = judgeCeiling(books, meters.get(entry.subject)!, entry, reserved, request.atMs);
    if (full === null) continue;
    refusal ??= full;
    if (latest === null || full.retryAtMs > latest.retryAtMs) latest = full;
  }
  if (refusal !== null && latest !== null) {
    return { ok: false, refusal: { ...refusal, retryAtMs: latest.retryAtMs, retryAfter: latest.retryAfter } };
  }

  const call: CallReservation = {
    callId: request.callId,
    model: request.model,
    agent: request.agent ?? null,
    endUser: request.endUser ?? null,
    subjects,
    reserved,
    maxOutputTokens,
    atMs: request.atMs,
    deadlineMs: request.atMs + (request.leaseMs ?? config.leaseMs ?? DEFAULT_CALL_LEASE_MS),
    status: 'open',
    booked: null,
    estimated: false,
    closedAtMs: null,
  };
  for (const subject of subjects) {
    const meter = meters.get(subject)!;
    requireAmountsFit('inputTokens', `what ${subject} holds`, meter.held, reserved);
    books.putMeter(subject, { ...meter, held: addCallAmounts(meter.held, reserved) });
  }
  books.putReservation(call);
  return { ok: true, call, retried: false };
}

/**
 * Ends a call with what it reported (docs/design/rules.md#m5): the reservation is released from
 * every meter and the usage booked there (tokens: input + output; 1 request; minor units as
 * reported, else the worst case held, marked as an estimate). With no usage the worst case is booked,
 * marked as an estimate. Usage above the worst case is booked as it happened. A call that already
 * ended the same way answers again (`retried`); otherwise an ended call throws `CONFLICT`, an
 * unknown one `NOT_FOUND`.
 */
export function decideAdjustCall(books: CallBooks, request: AdjustCallRequest): CallEnded {
  const call = requireCall(books, request.callId);
  const usage = request.usage;
  const estimated = usage === undefined || (usage.minorUnits === undefined && call.reserved.minorUnits > 0);
  const amounts: CallAmounts =
    usage === undefined
      ? call.reserved
      : { tokens: saturatingAdd(usage.inputTokens, usage.outputTokens), requests: 1, minorUnits: usage.minorUnits ?? call.reserved.minorUnits };
  if (call.status === 'booked' && call.booked !== null && sameAmounts(call.booked, amounts) && call.estimated === estimated) {
    return { call, retried: true };
  }
  if (call.status !== 'open') throw endedConflict(books.tenant, call, 'adjusted');
  const meters = books.meters(call.subjects);
  meters.forEach((meter, i) => {
    if (meter !== null) requireAmountsFit('usage', `what ${call.subjects[i]} has booked`, meter.booked, amounts);
  });
  return { call: bookCall(books, call, amounts, estimated, request.atMs, meters), retried: false };
}

/**
 * Gives a failed call's reservation back (docs/design/rules.md#m5): nothing is booked. A released
 * call answers again (`retried`); a booked one throws `CONFLICT`, an unknown one `NOT_FOUND`.
 */
export function decideReleaseCall(books: CallBooks, request: { readonly callId: string; readonly atMs: number }): CallEnded {
  const call = requireCall(books, request.callId);
  if (call.status === 'released') return { call, retried: true };
  if (call.status !== 'open') throw endedConflict(books.tenant, call, 'released');
  books.meters(call.subjects).forEach((stored, i) => {
    const meter = stored ?? emptyCallMeter(callPruneFloorMs(request.atMs));
    books.putMeter(call.subjects[i]!, { ...meter, held: subtractCallAmounts(meter.held, call.reserved) });
  });
  const released: CallReservation = { ...call, status: 'released', closedAtMs: request.atMs };
  books.putReservation(released);
  return { call: released, retried: false };
}

/**
 * Books up to `limit` open calls whose deadline has passed by `atMs` at their worst case, marked as
 * an estimate (docs/design/rules.md#m7), earliest deadline first. Answers how many it booked.
 * Each is booked at its deadline, the instant it ended (#m2; recorded no earlier than its meters'
 * newest, #m12), not at `atMs`: a call lost an hour ago must not fill the window of the next call,
 * nor a call lost in January count in the February of the tenant's next call.
 */
export function expireDueCalls(books: CallBooks, atMs: number, limit = DUE_CALLS_PER_DECISION): number {
  const due = books.dueReservations(atMs, limit);
  for (const call of due) bookCall(books, call, call.reserved, true, Math.min(call.deadlineMs, atMs));
  return due.length;
}

/** What one ceiling covering a subject counts at `atMs`: booked in its window or period, and held by calls in flight. */
export interface CeilingUsage {
  readonly counted: number;
  readonly held: number;
}

/**
 * The usage a ceiling counts at `atMs` (docs/design/rules.md#m2): booked after its window's start
 * (`atMs − windowSeconds × 1000`, exclusive) or since its period began, and held by calls in flight.
 */
export function ceilingUsage(books: CallBooks, meter: CallMeter, entry: CoveringCeiling, atMs: number): CeilingUsage {
  const start = countStartMs(entry, atMs);
  return { counted: bookedSince(meter, entry.ceiling.unit, throughInstant(books, meter, entry.subject, start)), held: meter.held[entry.ceiling.unit] };
}

// Everything recorded strictly after this instant counts: a window's start, or the instant before
// the period's first.
function countStartMs(entry: CoveringCeiling, atMs: number): number {
  const ceiling = entry.ceiling;
  return isWindowCeiling(ceiling) ? atMs - ceiling.windowSeconds * 1000 : periodStartMs(ceiling.period, atMs) - 1;
}

// The running total as of `startMs`: the meter's own total when its newest row is no later (no read).
function throughInstant(books: CallBooks, meter: CallMeter, subject: string, startMs: number): CallAmounts {
  if (meter.latestAtMs === null) return meter.base;
  if (meter.latestAtMs <= startMs) return meter.booked;
  return bookedThrough(meter, books.bookedAtOrBefore(subject, startMs));
}

function judgeCeiling(books: CallBooks, meter: CallMeter, entry: CoveringCeiling, reserved: CallAmounts, atMs: number): CallLimitedRefusal | null {
  const { subject, ceiling } = entry;
  const unit = ceiling.unit;
  const startMs = countStartMs(entry, atMs);
  const through = throughInstant(books, meter, subject, startMs);
  const counted = bookedSince(meter, unit, through);
  const held = meter.held[unit];
  const requested = reserved[unit];
  if (counted + held + requested <= ceiling.limit) return null;
  const base = { code: 'CallLimited' as const, tenant: books.tenant, subject, ceiling, counted, held, requested };
  // The calls in flight on this subject leave no room on their own: one of them must end first. If
  // what is booked leaves none either, the later of the two is the earliest instant worth asking.
  const byTime = counted + requested > ceiling.limit ? roomByTimeMs(books, entry, through, counted, requested, atMs) : null;
  if (held + requested > ceiling.limit) {
    const deadlineMs = Math.max(atMs, books.earliestDeadlineMs(subject) ?? atMs);
    return byTime !== null && byTime.retryAtMs > deadlineMs ? { ...base, ...byTime } : { ...base, retryAtMs: deadlineMs, retryAfter: 'in-flight' };
  }
  return { ...base, ...roomByTimeMs(books, entry, through, counted + held, requested, atMs) };
}

// When `counted + requested` fits again as time alone passes: once the booked usage that must go
// has left the window (`window`), or when the period ends (`period`).
function roomByTimeMs(
  books: CallBooks,
  entry: CoveringCeiling,
  through: CallAmounts,
  counted: number,
  requested: number,
  atMs: number,
): { retryAtMs: number; retryAfter: 'window' | 'period' } {
  const { subject, ceiling } = entry;
  if (!isWindowCeiling(ceiling)) return { retryAtMs: periodEndMs(periodKey(ceiling.period, atMs)), retryAfter: 'period' };
  // Room comes once the running total as of the window's start reaches this much.
  const target = through[ceiling.unit] + (counted + requested - ceiling.limit);
  const leavingAtMs = books.firstReaching(subject, ceiling.unit, target, countStartMs(entry, atMs));
  const windowMs = ceiling.windowSeconds * 1000;
  return { retryAtMs: leavingAtMs === null ? atMs + windowMs : leavingAtMs + windowMs, retryAfter: 'window' };
}

// Whether a reservation retried under an open call's id is that call: the same parties and worst case.
function isSameCall(call: CallReservation, request: ReserveCallRequest, reserved: CallAmounts): boolean {
  return (
    call.model === request.model &&
    call.agent === (request.agent ?? null) &&
    call.endUser === (request.endUser ?? null) &&
    sameAmounts(call.reserved, reserved)
  );
}

// Refuses an amount that would carry a running total past 2^53 − 1: saturating there would stop
// every window of the meter from counting (docs/design/rules.md#m2).
function requireAmountsFit(field: string, what: string, total: CallAmounts, adding: CallAmounts): void {
  requireSumFits(field, `${what} in tokens`, total.tokens, adding.tokens);
  requireSumFits(field, `${what} in requests`, total.requests, adding.requests);
  requireSumFits(field, `${what} in minor units`, total.minorUnits, adding.minorUnits);
}

// `stored`: the call's meters as just read, in subject order (read here when not given).
function bookCall(
  books: CallBooks,
  call: CallReservation,
  amounts: CallAmounts,
  estimated: boolean,
  atMs: number,
  stored: readonly (CallMeter | null)[] = books.meters(call.subjects),
): CallReservation {
  for (const [i, subject] of call.subjects.entries()) {
    let meter = stored[i] ?? emptyCallMeter(callPruneFloorMs(atMs));
    if (isCallPruneDue(meter, atMs)) meter = pruneMeter(books, subject, meter, atMs);
    const recordedAtMs = recordedCallInstantMs(atMs, meter);
    const booked = addCallAmounts(meter.booked, amounts);
    books.putUsage(subject, recordedAtMs, booked);
    books.putMeter(subject, { ...meter, booked, held: subtractCallAmounts(meter.held, call.reserved), latestAtMs: recordedAtMs });
  }
  const ended: CallReservation = { ...call, status: 'booked', booked: amounts, estimated, closedAtMs: atMs };
  books.putReservation(ended);
  return ended;
}

// Deletes the usage rows no window or period can reach any more, keeping their running total as the
// base; the tenant's meter also takes the ended reservations with it.
function pruneMeter(books: CallBooks, subject: string, meter: CallMeter, atMs: number): CallMeter {
  const floorMs = callPruneFloorMs(atMs);
  const base = throughInstant(books, meter, subject, floorMs);
  books.pruneUsage(subject, floorMs);
  if (subject === TENANT_SUBJECT) books.pruneClosedReservations(floorMs);
  return { ...meter, base, prunedThroughMs: floorMs };
}

function requireCall(books: CallBooks, callId: string): CallReservation {
  const call = books.reservation(callId);
  if (call === null) {
    throw new QuotaError('NOT_FOUND', `callId: tenant '${books.tenant}' has no model call '${callId}'; reserve it first (or it ended over a day ago)`, {
      details: { field: 'callId' },
    });
  }
  return call;
}

function endedConflict(tenant: string, call: CallReservation, attempted: string): QuotaError {
  const how = call.status === 'booked' ? (call.estimated ? 'booked as an estimate' : 'booked as reported') : 'released';
  return new QuotaError('CONFLICT', `callId: model call '${call.callId}' of tenant '${tenant}' was already ${how}, so it cannot be ${attempted} now`, {
    details: { field: 'callId', status: call.status, estimated: call.estimated },
  });
}

function sameAmounts(a: CallAmounts, b: CallAmounts): boolean {
  return a.tokens === b.tokens && a.requests === b.requests && a.minorUnits === b.minorUnits;
}

/** The configured ceilings as stored, else none. */
export function storedCallCeilings(books: CallBooks): CallCeilings {
  return books.callCeilings() ?? NO_CALL_CEILINGS;
}
