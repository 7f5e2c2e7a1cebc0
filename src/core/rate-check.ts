import { isCountableWindow, rateWindowStartMs, type RateCeiling } from './rate.js';
import type { RateLimitedRefusal, UncountableRateRefusal } from './refusal.js';

/** Input of {@link checkRate}: the grant's counted dispatch instants (Unix ms) and the ceilings to judge them by. */
export interface RateCheck {
  readonly tenant: string;
  readonly grant: string;
  readonly ceilings: readonly RateCeiling[];
  readonly instantsMs: readonly number[];
  readonly atMs: number;
}

/**
 * The rate check (docs/design/rules.md#d6, #d7). First, any ceiling with an uncountable window
 * refuses `UncountableRate` (the first in list order) before anything is counted. Then, per ceiling
 * in order, the instants strictly after the window start are counted; `reached ≥ count` refuses
 * `RateLimited` with the true count of the first full ceiling and `retryAtMs`, the earliest instant
 * at which enough counted dispatches will have left *every* full ceiling's window for one more to
 * fit. Returns `null` when every ceiling has room; an empty list always has room and `count 0`
 * never does.
 */
export function checkRate(input: RateCheck): RateLimitedRefusal | UncountableRateRefusal | null {
  for (const ceiling of input.ceilings) {
    if (!isCountableWindow(ceiling)) {
      return { code: 'UncountableRate', grant: input.grant, ceiling };
    }
  }
  for (const ceiling of input.ceilings) {
    const startMs = rateWindowStartMs(input.atMs, ceiling.windowSeconds);
    const counted = input.instantsMs.filter((instant) => instant > startMs);
    if (counted.length >= ceiling.count) {
      return {
        code: 'RateLimited',
        tenant: input.tenant,
        grant: input.grant,
        ceiling,
        reached: counted.length,
        retryAtMs: retryAtMs(input.ceilings, input.instantsMs, input.atMs),
      };
    }
  }
  return null;
}

// A retry must find room under every ceiling, not just the one reported, so it waits for the
// latest of their individual instants (a ceiling with room now contributes atMs). Counts only
// shrink as time passes with no new rows, so that instant has room everywhere.
function retryAtMs(ceilings: readonly RateCeiling[], instantsMs: readonly number[], atMs: number): number {
  return ceilings.reduce((latest, ceiling) => Math.max(latest, ceilingRetryAtMs(ceiling, instantsMs, atMs)), atMs);
}

// When the window will hold fewer than `count` of today's rows: the (reached − count)th oldest
// counted instant (0-based) must fall out, which happens windowSeconds after it. A count of 0
// never has room, so there is no such instant; the caller is told to look again one window on.
function ceilingRetryAtMs(ceiling: RateCeiling, instantsMs: readonly number[], atMs: number): number {
  const windowMs = ceiling.windowSeconds * 1000;
  if (ceiling.count === 0) return atMs + windowMs;
  const startMs = rateWindowStartMs(atMs, ceiling.windowSeconds);
  const counted = instantsMs.filter((instant) => instant > startMs).sort((a, b) => a - b);
  if (counted.length < ceiling.count) return atMs;
  const leaving = counted[counted.length - ceiling.count] ?? atMs;
  return Math.max(atMs, leaving + windowMs);
}
