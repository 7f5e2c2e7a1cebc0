import { describe, expect, it } from 'vitest';

import { hasOverrun, overrunOf } from './overrun.js';

// What a settlement spent beyond the hold its pass was granted, per unit (docs/design/rules.md#l90, #l91).

describe('overrunOf', () => {
  it('is nothing without a hold', () => {
    expect(overrunOf({ tokens: 50, minorUnits: 7 }, null)).toEqual({ tokens: 0, minorUnits: 0 });
  });

  it('counts each unit against its own hold, and a unit held at 0 was not bounded, so it never overruns', () => {
    expect(overrunOf({ tokens: 50, minorUnits: 150 }, { tokens: 0, minorUnits: 100 })).toEqual({ tokens: 0, minorUnits: 50 });
    expect(overrunOf({ tokens: 150, minorUnits: 50 }, { tokens: 100, minorUnits: 0 })).toEqual({ tokens: 50, minorUnits: 0 });
    expect(overrunOf({ tokens: 100, minorUnits: 99 }, { tokens: 100, minorUnits: 100 })).toEqual({ tokens: 0, minorUnits: 0 });
    expect(overrunOf({ tokens: 101, minorUnits: 101 }, { tokens: 100, minorUnits: 100 })).toEqual({ tokens: 1, minorUnits: 1 });
  });
});

describe('hasOverrun', () => {
  it('is true when either unit is over, false when neither is', () => {
    expect(hasOverrun({ tokens: 0, minorUnits: 0 })).toBe(false);
    expect(hasOverrun({ tokens: 1, minorUnits: 0 })).toBe(true);
    expect(hasOverrun({ tokens: 0, minorUnits: 1 })).toBe(true);
    expect(hasOverrun({ tokens: 2, minorUnits: 3 })).toBe(true);
  });
});
