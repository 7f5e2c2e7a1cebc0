import { describe, expect, it } from 'vitest';

import { isQuotaError } from '../core/errors.js';
import { ManualClock } from './manual-clock.js';

describe('ManualClock', () => {
  it('starts at the given instant, or the epoch', () => {
    expect(new ManualClock(1_767_600_000_000).nowMs()).toBe(1_767_600_000_000);
    expect(new ManualClock().nowMs()).toBe(0);
  });

  it('moves only when advanced or set, and answers the new instant', () => {
    const clock = new ManualClock(1000);
    expect(clock.nowMs()).toBe(1000);
    expect(clock.advance(60_000)).toBe(61_000);
    expect(clock.advance(0)).toBe(61_000);
    expect(clock.nowMs()).toBe(61_000);
    expect(clock.set(500)).toBe(500);
    expect(clock.nowMs()).toBe(500);
  });

  it('refuses to advance backwards or by a fraction, naming the argument and leaving the clock alone', () => {
    const clock = new ManualClock(1000);
    for (const ms of [-1, 0.5, Number.NaN]) {
      let caught: unknown;
      try {
        clock.advance(ms);
      } catch (error) {
        caught = error;
      }
      expect(isQuotaError(caught, 'INVALID_ARGUMENT') && caught.details.field).toBe('ms');
    }
    expect(clock.nowMs()).toBe(1000);
  });

  it('refuses instants that are not safe integers', () => {
    expect(() => new ManualClock(1.5)).toThrow(/startMs/);
    expect(() => new ManualClock(1000).set(Number.MAX_SAFE_INTEGER + 1)).toThrow(/ms: must be an integer instant/);
    expect(() => new ManualClock(Number.MAX_SAFE_INTEGER).advance(1)).toThrow(/ms: must be an integer instant/);
  });
});
