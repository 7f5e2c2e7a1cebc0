import { invalidArgument } from './errors.js';
import { periodKey, type Period } from './period.js';

/** Most periods one spend-history read may cover: three years of months, or about five weeks of days. */
export const MAX_HISTORY_PERIODS = 36;

/**
 * The keys of the `count` billing periods of kind `period` that end with the one holding `atMs`
 * (Unix ms), oldest first: `recentPeriodKeys('monthly', <2026-03-10>, 3)` is
 * `['2026-01', '2026-02', '2026-03']`. UTC calendar months or days (docs/concepts/glossary.md,
 * "period"). Pure. Throws `INVALID_ARGUMENT` naming `periods` when `count` is not an integer from 1
 * to {@link MAX_HISTORY_PERIODS}, and what `periodKey` throws for an instant outside years
 * 0000–9999.
 */
export function recentPeriodKeys(period: Period, atMs: number, count: number): string[] {
  if (!Number.isInteger(count) || count < 1 || count > MAX_HISTORY_PERIODS) {
    throw invalidArgument('periods', `must be a whole number from 1 to ${MAX_HISTORY_PERIODS}, got ${String(count)}`);
  }
  const keys: string[] = [periodKey(period, atMs)];
  const cursor = new Date(atMs);
  for (let i = 1; i < count; i += 1) {
    if (period === 'daily') {
      cursor.setUTCDate(cursor.getUTCDate() - 1);
    } else {
      // Step to day 1 first, so stepping back from the 31st never lands in the same month.
      cursor.setUTCDate(1);
      cursor.setUTCMonth(cursor.getUTCMonth() - 1);
    }
    if (cursor.getUTCFullYear() < 0) break;
    keys.push(periodKey(period, cursor.getTime()));
  }
  return keys.reverse();
}
