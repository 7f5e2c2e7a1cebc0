import type { Clock } from '../core/clock.js';

/**
 * The wall clock: `Date.now()`. The plane's default clock; the plane is the one layer allowed to
 * read it (DESIGN.md, Architecture: "the clock is an argument everywhere below the plane").
 */
export const systemClock: Clock = Object.freeze({ nowMs: () => Date.now() });
