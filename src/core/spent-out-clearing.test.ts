import { describe, expect, it } from 'vitest';

import type { SpentOutRefusal } from './refusal.js';
import { spentOutClearing } from './spent-out-clearing.js';

const refusal = (settled: number, reserved: number, requested: number, period = '2026-01-15'): SpentOutRefusal => ({
  code: 'SpentOut',
  tenant: 'acme',
  period,
  unit: 'tokens',
  settled,
  reserved,
  requested,
  limit: 1000,
  bound: 'tenant',
});

describe('D13: when a SpentOut can clear', () => {
  it('never, when the request alone exceeds the ceiling (an exact fill still fits)', () => {
    expect(spentOutClearing(refusal(0, 0, 1001))).toEqual({ when: 'never' });
    expect(spentOutClearing(refusal(1, 0, 1000))).not.toEqual({ when: 'never' });
  });

  it('at the period’s end, when settled spend alone leaves no room; a day ends at the next midnight, a month on the 1st', () => {
    expect(spentOutClearing(refusal(900, 0, 101))).toEqual({ when: 'period-end', atMs: Date.UTC(2026, 0, 16) });
    expect(spentOutClearing(refusal(900, 0, 101, '2026-12'))).toEqual({ when: 'period-end', atMs: Date.UTC(2027, 0, 1) });
    // Settled spend near the largest amount does not wrap into room.
    expect(spentOutClearing(refusal(Number.MAX_SAFE_INTEGER, 0, 1))).toMatchObject({ when: 'period-end' });
  });

  it('when holds come back, when settled plus the request fits and only held spend is in the way', () => {
    expect(spentOutClearing(refusal(900, 50, 100))).toEqual({ when: 'holds' });
    expect(spentOutClearing(refusal(0, 1000, 1000))).toEqual({ when: 'holds' });
  });
});
