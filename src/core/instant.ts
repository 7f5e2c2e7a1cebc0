import { describe } from './amounts.js';
import { invalidArgument } from './errors.js';

/**
 * The last instant accepted anywhere (Unix ms): 9999-12-31T23:59:59.999Z, the last instant a
 * period key can name, and inside the ULID time range (docs/design/decisions.md "Time in
 * milliseconds"). The HTTP schemas take their `maximum` from it.
 */
export const MAX_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * An instant in integer Unix ms from 0 to {@link MAX_INSTANT_MS}, else `INVALID_ARGUMENT` naming
 * `field`. The one instant rule of the plane, the store port and the HTTP schemas.
 */
export function requireInstantMs(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_INSTANT_MS) {
    throw invalidArgument(
      field,
      `must be an integer Unix instant in milliseconds between 0 and ${MAX_INSTANT_MS}, got ${describe(value)}`,
    );
  }
  return value;
}

/**
 * An instant (integer Unix milliseconds) as ISO 8601 UTC to the second, for messages and terminal
 * output: `instant(Date.UTC(2026, 0, 5, 8))` is `2026-01-05T08:00:00Z`. Never throws: an instant a
 * `Date` cannot show (beyond ±8.64e15 ms, or not a number) comes back as its raw ms
 * (`9007199254740991ms`), so one odd row (a lease capped at 2^53 − 1) cannot break a message or a
 * whole listing. Scripts read the `…AtMs` fields, never this text.
 */
export function instant(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return `${ms}ms`;
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
