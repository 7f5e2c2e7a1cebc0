import { describe, expect, it } from 'vitest';

import { worstCaseMinorUnits } from './call-cost.js';
import { MAX_CALL_AMOUNT } from './call-ceilings.js';

describe('worstCaseMinorUnits', () => {
  it('rounds a fraction of a minor unit up, and charges nothing at a rate of 0', () => {
    expect(worstCaseMinorUnits(1, 1)).toBe(1);
    expect(worstCaseMinorUnits(1_000_000, 3)).toBe(3);
    expect(worstCaseMinorUnits(1_000_001, 3)).toBe(4);
    expect(worstCaseMinorUnits(4113, 15_000_000)).toBe(61_695);
    expect(worstCaseMinorUnits(0, 15_000_000)).toBe(0);
    expect(worstCaseMinorUnits(4113, 0)).toBe(0);
  });

  it('is exact past 2^53 and caps at MAX_CALL_AMOUNT', () => {
    expect(worstCaseMinorUnits(MAX_CALL_AMOUNT, 1_000_000)).toBe(MAX_CALL_AMOUNT);
    expect(worstCaseMinorUnits(MAX_CALL_AMOUNT, 1_000_001)).toBe(MAX_CALL_AMOUNT);
    expect(worstCaseMinorUnits(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)).toBe(MAX_CALL_AMOUNT);
    expect(worstCaseMinorUnits(999_999_999_999, 1_000_000)).toBe(999_999_999_999);
  });
});
