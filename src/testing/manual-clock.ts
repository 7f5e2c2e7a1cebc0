import type { Clock } from '../core/clock.js';
import { invalidArgument } from '../core/errors.js';

/**
 * A {@link Clock} that moves only when told to, for tests and replays that drive virtual time
 * (docs/design/decisions.md "Time in milliseconds"). Instants are integer Unix milliseconds.
 *
 * @example
 * const clock = new ManualClock(Date.UTC(2026, 0, 5));
 * clock.advance(60_000); // one minute on
 */
export class ManualClock implements Clock {
  #nowMs: number;

  /** Starts at `startMs` (default 0, the Unix epoch). Throws `INVALID_ARGUMENT` for a non-integer instant. */
  constructor(startMs = 0) {
    this.#nowMs = requireInstant('startMs', startMs);
  }

  /** The current virtual instant, Unix ms. */
  nowMs(): number {
    return this.#nowMs;
  }

  /**
   * Moves the clock forward by `ms` (a non-negative integer) and returns the new instant. Throws
   * `INVALID_ARGUMENT` otherwise; to go back in time, say so with {@link ManualClock.set}.
   */
  advance(ms: number): number {
    if (!Number.isSafeInteger(ms) || ms < 0) {
      throw invalidArgument('ms', `must be a non-negative integer number of milliseconds, got ${String(ms)}; use set() to move back`);
    }
    return this.set(this.#nowMs + ms);
  }

  /** Puts the clock at `ms` (any integer instant, earlier ones included, as a skewed clock would) and returns it. */
  set(ms: number): number {
    this.#nowMs = requireInstant('ms', ms);
    return this.#nowMs;
  }
}

function requireInstant(field: string, value: number): number {
  if (!Number.isSafeInteger(value)) {
    throw invalidArgument(field, `must be an integer instant in Unix milliseconds, got ${String(value)}`);
  }
  return value;
}
