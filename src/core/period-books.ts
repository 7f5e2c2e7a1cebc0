import { periodKey } from './period.js';

/*
 * How one amount counts in both period kinds (docs/design/decisions.md "Period figures are
 * lossless"; L80–L83 in docs/design/rules.md): whatever
 * kind was in force, what was settled or held in a UTC day also counts in its UTC month. The
 * books therefore keep each settled amount and each hold against its month and, when known, its
 * day; a month's figures are the sum of everything in it, a day's figures the sum of everything
 * in that day. Switching daily ↔ monthly then never forgets or double-counts anything.
 */

/** True for a day key `YYYY-MM-DD`, false for a month key `YYYY-MM`. Keys must be valid period keys. */
export function isDayKey(key: string): boolean {
  return key.length === 10;
}

/** The month key `YYYY-MM` of a day or month key. */
export function monthOf(key: string): string {
  return key.slice(0, 7);
}

/**
 * The day an amount of period `key` counts in when it was settled or held at `atMs` (Unix ms):
 * the key itself when it is a day; the UTC day of `atMs` when `key` is the month of `atMs`;
 * otherwise unknown (`null`: the amount counts in its month only).
 */
export function dayOf(key: string, atMs: number | null): string | null {
  if (isDayKey(key)) return key;
  if (atMs === null) return null;
  return periodKey('monthly', atMs) === key ? periodKey('daily', atMs) : null;
}

/**
 * The period keys an amount of period `key` (with day `day`, or `null`) counts in: its month, and
 * its day when known, month first (the order rows are written and locked in).
 */
export function countedKeys(key: string, day: string | null): string[] {
  const month = monthOf(key);
  const known = isDayKey(key) ? key : day;
  return known === null || monthOf(known) !== month ? [month] : [month, known];
}
