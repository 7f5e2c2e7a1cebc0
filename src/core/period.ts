import { invalidArgument } from './errors.js';

/** How a tenant's spend is grouped into billing periods: UTC calendar months or days. */
export type Period = 'monthly' | 'daily';

/** Every accepted {@link Period}, in the order the CLI and docs list them. */
export const PERIODS: readonly Period[] = Object.freeze(['monthly', 'daily']);

/**
 * The billing-period key of the instant `atMs` (Unix milliseconds): `YYYY-MM` for monthly,
 * `YYYY-MM-DD` for daily, in UTC. Keys are fixed width, so string order is time order
 * (docs/design/rules.md#g5). Throws `INVALID_ARGUMENT` for an instant outside years 0000–9999.
 */
export function periodKey(period: Period, atMs: number): string {
  const date = new Date(atMs);
  const year = date.getUTCFullYear();
  if (!Number.isInteger(atMs) || Number.isNaN(date.getTime()) || year < 0 || year > 9999) {
    throw invalidArgument('atMs', `must be an integer instant between years 0000 and 9999, got ${atMs}`);
  }
  const month = String(date.getUTCMonth() + 1).padStart(2, '0');
  const monthKey = `${String(year).padStart(4, '0')}-${month}`;
  if (period === 'monthly') return monthKey;
  return `${monthKey}-${String(date.getUTCDate()).padStart(2, '0')}`;
}

/** The shape of a period key, `YYYY-MM` or `YYYY-MM-DD` (the HTTP schemas use it as their `pattern`). */
export const PERIOD_KEY_PATTERN = '^\\d{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12]\\d|3[01]))?$';

const PERIOD_KEY = new RegExp(PERIOD_KEY_PATTERN);

/** True for a string shaped like a monthly (`YYYY-MM`) or daily (`YYYY-MM-DD`) period key. */
export function isPeriodKey(value: unknown): value is string {
  return typeof value === 'string' && PERIOD_KEY.test(value);
}

/**
 * The first instant (Unix ms) after the period `key` ends, used to tell a caller refused for
 * settled spend when the period resets. Throws `INVALID_ARGUMENT` for a malformed key or a day the
 * calendar does not have (`2026-02-30`).
 */
export function periodEndMs(key: string): number {
  if (!isPeriodKey(key)) throw invalidArgument('period', `must be YYYY-MM or YYYY-MM-DD, got ${JSON.stringify(key)}`);
  const [y, m, d] = key.split('-').map(Number) as [number, number, number | undefined];
  // setUTCFullYear, unlike Date.UTC, does not read years 0–99 as 1900–1999.
  const start = new Date(0);
  start.setUTCFullYear(y, m - 1, d ?? 1);
  // A day the month does not have (2026-02-30) would roll into the next month: refuse it instead.
  if (start.getUTCDate() !== (d ?? 1)) {
    throw invalidArgument('period', `names a day the calendar does not have, got ${JSON.stringify(key)}`);
  }
  const end = new Date(0);
  end.setUTCFullYear(y, d === undefined ? m : m - 1, d === undefined ? 1 : d + 1);
  return end.getTime();
}

/** The first instant (Unix ms) of the `period` that `atMs` falls in: its UTC month's or day's start. */
export function periodStartMs(period: Period, atMs: number): number {
  const start = new Date(atMs);
  if (period === 'monthly') start.setUTCDate(1);
  start.setUTCHours(0, 0, 0, 0);
  return start.getTime();
}
