import type { Clock } from '../core/clock.js';

/**
 * The wall clock: `Date.now()`. The plane's default clock; the plane is the one layer allowed to
 * read it: below the plane, time is always an argument (docs/design/decisions.md "Time in
 * milliseconds").
 */
export const systemClock: Clock = Object.freeze({ nowMs: () => Date.now() });
