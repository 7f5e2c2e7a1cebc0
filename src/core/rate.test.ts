import { describe, expect, it } from 'vitest';
import { describeRateCeiling, isCountableWindow, MAX_RATE_WINDOW_SECONDS, ratePruneFloorMs, rateWindowStartMs } from './rate.js';

const T = 1_760_004_000_000;

describe('window arithmetic', () => {
  it('the window starts w seconds before, in ms', () => {
    expect(rateWindowStartMs(T, 60)).toBe(T - 60_000);
    expect(rateWindowStartMs(T, 1)).toBe(T - 1_000);
  });

  it('D8 the prune floor is t − 2 678 400 s, whatever ceilings a reservation states', () => {
    expect(MAX_RATE_WINDOW_SECONDS).toBe(2_678_400);
    expect(ratePruneFloorMs(T)).toBe(T - 2_678_400_000);
  });

  it('a window is countable from 1 s to 31 days', () => {
    expect(isCountableWindow({ count: 1, windowSeconds: 1 })).toBe(true);
    expect(isCountableWindow({ count: 1, windowSeconds: 2_678_400 })).toBe(true);
    for (const windowSeconds of [0, 2_678_401, 1.5, -1, Number.NaN]) {
      expect(isCountableWindow({ count: 1, windowSeconds })).toBe(false);
    }
  });

  it('describes a ceiling in words', () => {
    expect(describeRateCeiling({ count: 2, windowSeconds: 3600 })).toBe('at most 2 per 3600 seconds');
    expect(describeRateCeiling({ count: 1, windowSeconds: 1 })).toBe('at most 1 per 1 second');
  });
});
