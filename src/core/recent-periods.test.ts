import { describe, expect, it } from 'vitest';

import { QuotaError } from './errors.js';
import { MAX_HISTORY_PERIODS, recentPeriodKeys } from './recent-periods.js';

describe('recentPeriodKeys', () => {
  it('steps back whole UTC months from the 31st without repeating a month', () => {
    expect(recentPeriodKeys('monthly', Date.UTC(2026, 2, 31, 23, 59), 4)).toEqual(['2025-12', '2026-01', '2026-02', '2026-03']);
  });

  it('steps back UTC days across a month and a leap day', () => {
    expect(recentPeriodKeys('daily', Date.UTC(2028, 2, 1, 0, 0, 0, 1), 3)).toEqual(['2028-02-28', '2028-02-29', '2028-03-01']);
  });

  it('answers the current period alone for a count of 1', () => {
    expect(recentPeriodKeys('monthly', Date.UTC(2026, 10, 30), 1)).toEqual(['2026-11']);
  });

  it('refuses a count outside 1 … MAX_HISTORY_PERIODS, naming periods', () => {
    for (const count of [0, MAX_HISTORY_PERIODS + 1, 1.5]) {
      expect(() => recentPeriodKeys('daily', 0, count)).toThrow(QuotaError);
      expect(() => recentPeriodKeys('daily', 0, count)).toThrow(/periods/);
    }
  });
});

describe('recentPeriodKeys edges', () => {
  it('answers MAX_HISTORY_PERIODS periods and refuses one more, saying the range', () => {
    expect(recentPeriodKeys('daily', Date.UTC(2026, 0, 5), MAX_HISTORY_PERIODS)).toHaveLength(MAX_HISTORY_PERIODS);
    expect(() => recentPeriodKeys('daily', Date.UTC(2026, 0, 5), MAX_HISTORY_PERIODS + 1)).toThrow(
      `periods: must be a whole number from 1 to ${MAX_HISTORY_PERIODS}, got ${MAX_HISTORY_PERIODS + 1}`,
    );
  });

  it('stops at the first period of year 0000', () => {
    const feb0 = new Date(0);
    feb0.setUTCFullYear(0, 1, 10);
    expect(recentPeriodKeys('monthly', feb0.getTime(), 5)).toEqual(['0000-01', '0000-02']);
  });
});
