import fc from 'fast-check';
import { expect, it } from 'vitest';
import { MAX_AMOUNT } from './amounts.js';
import { isQuotaError } from './errors.js';
import { addSpend, requireSpend, spendEquals, ZERO_SPEND } from './spend.js';

const amount = fc.oneof(fc.nat({ max: 10_000 }), fc.maxSafeNat(), fc.constantFrom(0, MAX_AMOUNT - 1, MAX_AMOUNT));
const spend = fc.record({ tokens: amount, minorUnits: amount });

it('addSpend adds each unit on its own and saturates', () => {
  expect(addSpend({ tokens: 1, minorUnits: 2 }, { tokens: 10, minorUnits: 20 })).toEqual({ tokens: 11, minorUnits: 22 });
  expect(addSpend({ tokens: MAX_AMOUNT, minorUnits: 1 }, { tokens: 1, minorUnits: 1 })).toEqual({
    tokens: MAX_AMOUNT,
    minorUnits: 2,
  });
  fc.assert(
    fc.property(spend, (s) => {
      expect(addSpend(s, ZERO_SPEND)).toEqual(s);
    }),
  );
});

it('spendEquals compares both units', () => {
  expect(spendEquals({ tokens: 1, minorUnits: 2 }, { tokens: 1, minorUnits: 2 })).toBe(true);
  expect(spendEquals({ tokens: 1, minorUnits: 2 }, { tokens: 1, minorUnits: 3 })).toBe(false);
  expect(spendEquals({ tokens: 2, minorUnits: 2 }, { tokens: 1, minorUnits: 2 })).toBe(false);
});

it('ZERO_SPEND is zero in both units and frozen', () => {
  expect(ZERO_SPEND).toEqual({ tokens: 0, minorUnits: 0 });
  expect(Object.isFrozen(ZERO_SPEND)).toBe(true);
});

it('requireSpend returns a valid spend and names the bad unit otherwise', () => {
  expect(requireSpend('spend', { tokens: 3, minorUnits: 0 })).toEqual({ tokens: 3, minorUnits: 0 });
  expect(() => requireSpend('settlement.spend', { tokens: 3, minorUnits: -1 })).toThrow(/settlement\.spend\.minorUnits/);
  expect(() => requireSpend('settlement.spend', { tokens: 1.5, minorUnits: 0 })).toThrow(/settlement\.spend\.tokens/);
  expect(() => requireSpend('spend', undefined)).toThrow(/spend\.tokens/);
  try {
    requireSpend('spend', { tokens: 1 });
    expect.unreachable('a spend without minorUnits must be refused');
  } catch (error) {
    expect(isQuotaError(error, 'INVALID_ARGUMENT')).toBe(true);
  }
});
