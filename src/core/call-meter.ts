import type { CallUnit } from './call-ceilings.js';
import { saturatingAdd, flooredSub } from './amounts.js';
import { periodStartMs } from './period.js';

// The count behind model-call ceilings (docs/design/rules.md#m2, docs/design/decisions.md "Model
// calls counted by prefix sums"). Each subject (the tenant, an agent, a model, a group, an end
// user) has a meter: the running total of everything ever booked to it, and the calls' worst cases
// held while they are in flight. Every booking also writes a usage row: the running total as of the
// instant it was recorded. Recorded instants never go back (a booking is recorded at its own
// instant or the meter's latest, whichever is later), so the running total grows with the instant,
// and what any window holds is one subtraction: the total now, less the total as of the window's
// start, which is one indexed read whatever the window holds. Pure and synchronous.

/** An amount in each unit a model call is counted in. */
export interface CallAmounts {
  readonly tokens: number;
  readonly requests: number;
  readonly minorUnits: number;
}

/** Nothing, in every unit. */
export const NO_CALL_AMOUNTS: CallAmounts = Object.freeze({ tokens: 0, requests: 0, minorUnits: 0 });

/**
 * One subject's meter:
 * - `booked`: everything ever booked to the subject, per unit (the newest usage row's running total);
 * - `held`: the worst cases of its calls in flight;
 * - `latestAtMs`: the instant of its newest usage row (`null`: none yet);
 * - `base`: the running total as of `prunedThroughMs`, the instant at or before which usage rows
 *   were deleted (a window never reaches that far back).
 */
export interface CallMeter {
  readonly booked: CallAmounts;
  readonly held: CallAmounts;
  readonly latestAtMs: number | null;
  readonly base: CallAmounts;
  readonly prunedThroughMs: number;
}

/** A meter nothing was booked to, whose rows are deemed pruned through `atMs`. */
export function emptyCallMeter(atMs: number): CallMeter {
  return { booked: NO_CALL_AMOUNTS, held: NO_CALL_AMOUNTS, latestAtMs: null, base: NO_CALL_AMOUNTS, prunedThroughMs: atMs };
}

/** `a + b` in every unit, saturating at 2^53 − 1. */
export function addCallAmounts(a: CallAmounts, b: CallAmounts): CallAmounts {
  return { tokens: saturatingAdd(a.tokens, b.tokens), requests: saturatingAdd(a.requests, b.requests), minorUnits: saturatingAdd(a.minorUnits, b.minorUnits) };
}

/** `a − b` in every unit, floored at 0. */
export function subtractCallAmounts(a: CallAmounts, b: CallAmounts): CallAmounts {
  return { tokens: flooredSub(a.tokens, b.tokens), requests: flooredSub(a.requests, b.requests), minorUnits: flooredSub(a.minorUnits, b.minorUnits) };
}

/**
 * The instant a booking at `atMs` is recorded at: `atMs`, or the meter's newest recorded instant
 * when that is later (another instance's clock ran ahead). A lagging clock's booking thus leaves
 * every window no earlier than the bookings before it: skew errs toward refusing.
 */
export function recordedCallInstantMs(atMs: number, meter: CallMeter): number {
  return meter.latestAtMs === null ? atMs : Math.max(atMs, meter.latestAtMs);
}

/**
 * The running total as of `atMs` (every booking recorded at or before it): the newest usage row at
 * or before `atMs` as the store read it, or the meter's `base` when there is none (nothing booked
 * yet, or every such row pruned, whose total the base keeps).
 */
export function bookedThrough(meter: CallMeter, rowAtOrBefore: CallAmounts | null): CallAmounts {
  return rowAtOrBefore ?? meter.base;
}

/**
 * What a window or period counts in `unit`: booked after its start, `meter.booked` less the
 * running total as of the start ({@link bookedThrough}).
 */
export function bookedSince(meter: CallMeter, unit: CallUnit, throughStart: CallAmounts): number {
  return flooredSub(meter.booked[unit], throughStart[unit]);
}

/**
 * Usage rows at or before this instant may be deleted when booking at `atMs`: a day and an hour
 * before it, or an hour before its UTC month began when that is earlier, so no window (at most a
 * day) and no period (at most a month) that a decision near `atMs` counts reaches a deleted row.
 * The hour covers clocks of other instances running behind.
 */
export function callPruneFloorMs(atMs: number): number {
  return Math.min(atMs - 86_400_000, periodStartMs('monthly', atMs)) - 3_600_000;
}

/** Pruning waits until a minute of rows can go at once, so it is one statement now and then, not one per booking. */
export const CALL_PRUNE_STEP_MS = 60_000;

/** True when booking at `atMs` should first prune the meter's usage rows through {@link callPruneFloorMs}. */
export function isCallPruneDue(meter: CallMeter, atMs: number): boolean {
  return callPruneFloorMs(atMs) - meter.prunedThroughMs >= CALL_PRUNE_STEP_MS;
}
