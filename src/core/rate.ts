/**
 * At most `count` dispatches in any window of `windowSeconds` (sliding; docs/concepts/glossary.md,
 * "rate ceiling").
 */
export interface RateCeiling {
  readonly count: number;
  readonly windowSeconds: number;
}

/** The widest window a store can count: 31 days, 2 678 400 s (docs/design/rules.md#c39). */
export const MAX_RATE_WINDOW_SECONDS = 31 * 86_400;

/**
 * Start of the window that ends at `atMs` (exclusive): `atMs − windowSeconds × 1000`. A row counts
 * when its instant is strictly greater, so a row exactly at the start does not count and rows
 * stamped in the future do (clock skew errs toward refusing; docs/design/rules.md#d6,
 * docs/design/decisions.md "Time in milliseconds").
 */
export function rateWindowStartMs(atMs: number, windowSeconds: number): number {
  return atMs - windowSeconds * 1000;
}

/**
 * Rows at or before this instant can be deleted when reserving at `atMs`. It is store-wide (the
 * widest countable window), never a reservation's own ceilings, so a narrow declaration cannot
 * prune rows a wider one still counts (docs/design/rules.md#c38, #d8).
 */
export function ratePruneFloorMs(atMs: number): number {
  return rateWindowStartMs(atMs, MAX_RATE_WINDOW_SECONDS);
}

/**
 * True when a store can count `ceiling`'s window: 1 ≤ windowSeconds ≤ 2 678 400
 * (docs/design/rules.md#c39).
 */
export function isCountableWindow(ceiling: RateCeiling): boolean {
  return Number.isInteger(ceiling.windowSeconds) && ceiling.windowSeconds >= 1 && ceiling.windowSeconds <= MAX_RATE_WINDOW_SECONDS;
}

/** "at most N per W second(s)", as refusals and docs phrase a ceiling. */
export function describeRateCeiling(ceiling: RateCeiling): string {
  return `at most ${ceiling.count} per ${ceiling.windowSeconds} second${ceiling.windowSeconds === 1 ? '' : 's'}`;
}
