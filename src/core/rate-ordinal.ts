import { isCountableWindow, rateWindowStartMs, type RateCeiling } from './rate.js';
import type { UncountableRateRefusal } from './refusal.js';

// Rate ceilings judged from numbered dispatches (docs/design/decisions.md "Group commit": a
// decision's cost does not grow with the rows it would count): the
// store gives each dispatch of a (tenant, grant) the next ordinal and records it at an instant
// never earlier than the grant's latest recorded one. Recorded instants then grow with the
// ordinal, so the dispatches a window counts are always the newest ones, and whether a ceiling of
// `count` is full depends on one dispatch alone: the count-th most recent. A decision reads one
// row per ceiling, whatever the window holds. Pure and synchronous: stores read the rows named
// here (SQLite in TypeScript, PostgreSQL in SQL) and hand the instants back.

/**
 * The instant a dispatch is recorded at: its own `atMs`, or the grant's latest recorded instant
 * when that is later (another instance's clock ran ahead). A lagging clock therefore counts its
 * dispatch at the latest instant already recorded, so it leaves the window no earlier than the
 * dispatches before it: clock skew errs toward refusing (docs/design/rules.md#p9).
 */
export function recordedRateInstantMs(atMs: number, latestRecordedMs: number | null): number {
  return latestRecordedMs === null ? atMs : Math.max(atMs, latestRecordedMs);
}

/**
 * The ordinal whose recorded instant decides whether `ceiling` is full after `latestOrdinal`
 * dispatches: the `count`-th most recent, `latestOrdinal − count + 1`. `null` when there is no such
 * dispatch (fewer than `count` were ever made, or `count` is 0, which is always full).
 */
export function rateBoundaryOrdinal(latestOrdinal: number, ceiling: RateCeiling): number | null {
  if (ceiling.count === 0) return null;
  const ordinal = latestOrdinal - ceiling.count + 1;
  return ordinal >= 1 ? ordinal : null;
}

/**
 * What a store read for one ceiling: the recorded instant of its boundary dispatch
 * ({@link rateBoundaryOrdinal}), or `null` when that ordinal names no stored row (none made yet,
 * or pruned below the widest window, where it counts in no window either).
 */
export type RateBoundary = number | null;

/** A ceiling that is full now, the first in list order, and when a retry will fit every ceiling. */
export interface FullRateCeiling {
  readonly code: 'Full';
  readonly ceiling: RateCeiling;
  readonly retryAtMs: number;
}

/**
 * The rate check over numbered dispatches; the same answers as `checkRate` over the recorded
 * instants (docs/design/rules.md#d6, #d7). First, any ceiling with an uncountable window refuses
 * `UncountableRate` (the first in list order) before anything is counted. Then a ceiling is full
 * when `count` is 0, or its boundary dispatch is stored and recorded strictly after the window's
 * start (`atMs − windowSeconds × 1000`): then it and the `count − 1` dispatches after it all count.
 * Returns `null` when every ceiling has room, else the first full ceiling with `retryAtMs`: the
 * latest, over every ceiling, of the instant its boundary dispatch leaves its window
 * (`boundary + windowSeconds × 1000`; a ceiling with room gives `atMs`, a count of 0 gives
 * `atMs + windowSeconds × 1000`). The store adds `reached`, the full ceiling's true count, with
 * {@link countedSince}.
 *
 * `boundaries[i]` belongs to `ceilings[i]`; an empty list always has room.
 */
export function judgeRateBoundaries(input: {
  readonly grant: string;
  readonly ceilings: readonly RateCeiling[];
  readonly boundaries: readonly RateBoundary[];
  readonly atMs: number;
}): UncountableRateRefusal | FullRateCeiling | null {
  for (const ceiling of input.ceilings) {
    if (!isCountableWindow(ceiling)) return { code: 'UncountableRate', grant: input.grant, ceiling };
  }
  let full: RateCeiling | null = null;
  let retryAtMs = input.atMs;
  input.ceilings.forEach((ceiling, index) => {
    const windowMs = ceiling.windowSeconds * 1000;
    const boundaryMs = input.boundaries[index] ?? null;
    const isFull = ceiling.count === 0 || (boundaryMs !== null && boundaryMs > rateWindowStartMs(input.atMs, ceiling.windowSeconds));
    if (!isFull) return;
    full ??= ceiling;
    retryAtMs = Math.max(retryAtMs, ceiling.count === 0 ? input.atMs + windowMs : (boundaryMs as number) + windowMs);
  });
  return full === null ? null : { code: 'Full', ceiling: full, retryAtMs };
}

/**
 * How many dispatches a window counts, from the latest ordinal and the first ordinal recorded
 * strictly after the window's start (`null`: none is). Ordinals are dense above the pruned ones,
 * and pruned ones count in no window, so this is the window's true count.
 */
export function countedSince(latestOrdinal: number, firstCountedOrdinal: number | null): number {
  return firstCountedOrdinal === null ? 0 : latestOrdinal - firstCountedOrdinal + 1;
}
