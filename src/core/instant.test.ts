import { describe, expect, it } from 'vitest';

import { instant } from './instant.js';

describe('instant', () => {
  it('an instant prints as ISO 8601 UTC to the second', () => {
    expect(instant(Date.UTC(2026, 0, 5, 8, 0, 0, 250))).toBe('2026-01-05T08:00:00Z');
  });

  it('an instant a Date cannot show prints its raw ms instead of throwing (a lease capped at 2^53 − 1)', () => {
    expect(instant(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991ms');
    expect(instant(Number.NaN)).toBe('NaNms');
  });
});
