import { describe, expect, it } from 'vitest';

import { countedKeys, dayOf, isDayKey, monthOf } from './period-books.js';

// Which books an amount counts in: its month always, its day when known
// (docs/design/decisions.md "Period figures are lossless").

const JAN_5 = Date.UTC(2026, 0, 5, 8); // 2026-01-05T08:00Z

describe('dayOf', () => {
  it('is a day key itself, whatever the instant', () => {
    expect(dayOf('2026-01-05', null)).toBe('2026-01-05');
    expect(dayOf('2026-01-07', JAN_5)).toBe('2026-01-07');
  });

  it('is the UTC day of the instant for a month key of that month, and unknown otherwise', () => {
    expect(dayOf('2026-01', JAN_5)).toBe('2026-01-05');
    expect(dayOf('2025-12', JAN_5)).toBeNull();
    expect(dayOf('2026-01', null)).toBeNull();
  });
});

describe('countedKeys', () => {
  it('is the month, then the day when it is known and in that month', () => {
    expect(countedKeys('2026-01', null)).toEqual(['2026-01']);
    expect(countedKeys('2026-01', '2026-01-05')).toEqual(['2026-01', '2026-01-05']);
    expect(countedKeys('2026-01-05', null)).toEqual(['2026-01', '2026-01-05']);
    expect(countedKeys('2026-01', '2026-02-01')).toEqual(['2026-01']);
  });

  it('tells day keys from month keys', () => {
    expect(isDayKey('2026-01-05')).toBe(true);
    expect(isDayKey('2026-01')).toBe(false);
    expect(monthOf('2026-01-05')).toBe('2026-01');
  });
});
