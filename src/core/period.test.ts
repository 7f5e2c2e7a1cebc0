import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isPeriodKey, type Period, periodEndMs, periodKey, PERIODS } from './period.js';

// Year 0000-01-01 and 9999-12-31T23:59:59.999, the instants periodKey accepts.
const FIRST_MS = -62_167_219_200_000;
const LAST_MS = 253_402_300_799_999;

const instant = fc.oneof(
  fc.integer({ min: FIRST_MS, max: LAST_MS }),
  fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
  fc.constantFrom(FIRST_MS, LAST_MS, 0, -1, 1_767_600_000_000),
);
const period = fc.constantFrom<Period>(...PERIODS);

describe('periodKey', () => {
  it.each([
    // instants in Unix ms, and the UTC month and day each falls in
    { atMs: 1_767_600_000_000, monthly: '2026-01', daily: '2026-01-05' },
    { atMs: 1_794_000_000_000, monthly: '2026-11', daily: '2026-11-06' },
    { atMs: 1_760_000_000_000, monthly: '2025-10', daily: '2025-10-09' },
  ])('$atMs ms is $monthly / $daily', ({ atMs, monthly, daily }) => {
    expect(periodKey('monthly', atMs)).toBe(monthly);
    expect(periodKey('daily', atMs)).toBe(daily);
  });

  it('G5 monthly keys at 1 767 600 000 s < 1 794 000 000 s, both 7 long; a daily key is 10 long', () => {
    const early = periodKey('monthly', 1_767_600_000_000);
    const late = periodKey('monthly', 1_794_000_000_000);
    expect(early < late).toBe(true);
    expect(early.length).toBe(7);
    expect(late.length).toBe(7);
    expect(periodKey('daily', 1_767_600_000_000).length).toBe(10);
  });

  it('uses UTC: the last ms of a day and month belongs to it, the next ms does not', () => {
    const midnight = Date.UTC(2026, 1, 1); // 2026-02-01T00:00Z
    expect(periodKey('daily', midnight - 1)).toBe('2026-01-31');
    expect(periodKey('daily', midnight)).toBe('2026-02-01');
    expect(periodKey('monthly', midnight - 1)).toBe('2026-01');
    expect(periodKey('monthly', midnight)).toBe('2026-02');
  });

  it('pads years and months to fixed width across the whole accepted range', () => {
    expect(periodKey('monthly', FIRST_MS)).toBe('0000-01');
    expect(periodKey('daily', FIRST_MS)).toBe('0000-01-01');
    expect(periodKey('daily', LAST_MS)).toBe('9999-12-31');
    expect(periodKey('monthly', Date.UTC(1905, 2, 1))).toBe('1905-03');
    expect(periodKey('daily', -1)).toBe('1969-12-31');
  });

  it('keys are fixed width and string order is time order', () => {
    fc.assert(
      fc.property(period, instant, instant, (p, a, b) => {
        const [early, late] = a <= b ? [a, b] : [b, a];
        const ka = periodKey(p, early);
        const kb = periodKey(p, late);
        expect(ka.length).toBe(p === 'monthly' ? 7 : 10);
        expect(isPeriodKey(ka)).toBe(true);
        expect(ka <= kb).toBe(true);
      }),
    );
  });

  it('refuses instants that are not integers or fall outside years 0000–9999, naming atMs', () => {
    for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, FIRST_MS - 1, LAST_MS + 1, 8.64e15 + 1]) {
      expect(() => periodKey('monthly', bad)).toThrow(/^atMs: /);
    }
  });
});

describe('isPeriodKey', () => {
  it('accepts YYYY-MM and YYYY-MM-DD and nothing else', () => {
    for (const ok of ['2026-01', '2026-12', '2026-01-05', '0000-01', '9999-12-31']) expect(isPeriodKey(ok)).toBe(true);
    const bad = ['2026-1', '2026-13', '2026-00', '2026-01-00', '2026-01-32', '26-01', '2026-01-05T00', ' 2026-01'];
    for (const value of [...bad, 202601, null]) {
      expect(isPeriodKey(value)).toBe(false);
    }
  });
});

describe('periodEndMs', () => {
  it('is the first instant of the next month or day', () => {
    expect(periodEndMs('2026-01')).toBe(Date.UTC(2026, 1, 1));
    expect(periodEndMs('2026-12')).toBe(Date.UTC(2027, 0, 1));
    expect(periodEndMs('2026-01-31')).toBe(Date.UTC(2026, 1, 1));
    expect(periodEndMs('2028-02-28')).toBe(Date.UTC(2028, 1, 29));
    expect(periodEndMs('2028-02-29')).toBe(Date.UTC(2028, 2, 1));
    expect(periodEndMs('2026-12-31')).toBe(Date.UTC(2027, 0, 1));
  });

  it('handles years 0000–0099 as those years, not as 19xx', () => {
    expect(periodKey('monthly', periodEndMs('0050-01') - 1)).toBe('0050-01');
    expect(periodKey('daily', periodEndMs('0000-12-31'))).toBe('0001-01-01');
  });

  it('ends exactly the period periodKey named: the ms before is inside, the end is in a later period', () => {
    fc.assert(
      fc.property(period, instant, (p, atMs) => {
        const key = periodKey(p, atMs);
        const endMs = periodEndMs(key);
        expect(endMs).toBeGreaterThan(atMs);
        expect(periodKey(p, endMs - 1)).toBe(key);
        if (endMs <= LAST_MS) expect(periodKey(p, endMs) > key).toBe(true);
      }),
    );
  });

  it('refuses a malformed key or a day the calendar does not have, naming period', () => {
    for (const bad of ['2026', '2026-13', '2026-1-05', 'monthly', '', '2026-02-30', '2026-04-31', '2027-02-29']) {
      expect(() => periodEndMs(bad)).toThrow(/^period: /);
    }
  });
});

describe('period keys are strings', () => {
  it('refuses a value that only looks like a key once turned into text', () => {
    expect(isPeriodKey(['2026-01'])).toBe(false);
    expect(isPeriodKey({ toString: () => '2026-01' })).toBe(false);
    expect(isPeriodKey('2026-01')).toBe(true);
  });

  it('says what was wrong with a key or an instant', () => {
    expect(() => periodEndMs('2026-1')).toThrow('period: must be YYYY-MM or YYYY-MM-DD, got "2026-1"');
    expect(() => periodEndMs('2026-02-30')).toThrow('period: names a day the calendar does not have, got "2026-02-30"');
    expect(() => periodKey('monthly', 1.5)).toThrow('atMs: must be an integer instant between years 0000 and 9999, got 1.5');
  });
});
