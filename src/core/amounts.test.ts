import fc from 'fast-check';
import { describe as suite, expect, it } from 'vitest';
import { describe, flooredSub, isAmount, MAX_AMOUNT, requireAmount, saturatingAdd } from './amounts.js';
import { QuotaError } from './errors.js';

const MAX = BigInt(MAX_AMOUNT);

// Amounts that crowd the edges, where saturation bugs live, plus ordinary ones.
const amount = fc.oneof(
  fc.nat({ max: 10_000 }),
  fc.maxSafeNat(),
  fc.integer({ min: MAX_AMOUNT - 10_000, max: MAX_AMOUNT }),
  fc.constantFrom(0, 1, 2, MAX_AMOUNT - 1, MAX_AMOUNT, 2 ** 52, 2 ** 26),
);

const clamp = (value: bigint): number => Number(value > MAX ? MAX : value);

suite('saturatingAdd', () => {
  it('is the exact sum up to the maximum and the maximum beyond it', () => {
    fc.assert(
      fc.property(amount, amount, (a, b) => {
        expect(saturatingAdd(a, b)).toBe(clamp(BigInt(a) + BigInt(b)));
      }),
    );
  });

  it('saturates at MAX_SAFE_INTEGER rather than losing precision', () => {
    expect(MAX_AMOUNT).toBe(Number.MAX_SAFE_INTEGER);
    expect(saturatingAdd(MAX_AMOUNT, 1)).toBe(MAX_AMOUNT);
    expect(saturatingAdd(MAX_AMOUNT, MAX_AMOUNT)).toBe(MAX_AMOUNT);
    expect(saturatingAdd(MAX_AMOUNT - 1, 1)).toBe(MAX_AMOUNT);
    expect(saturatingAdd(2, 3)).toBe(5);
  });
});

suite('flooredSub', () => {
  it('is a − b when a > b and 0 otherwise', () => {
    fc.assert(
      fc.property(amount, amount, (a, b) => {
        const expected = BigInt(a) > BigInt(b) ? Number(BigInt(a) - BigInt(b)) : 0;
        expect(flooredSub(a, b)).toBe(expected);
      }),
    );
    expect(flooredSub(3, 5)).toBe(0);
    expect(flooredSub(5, 5)).toBe(0);
    expect(flooredSub(5, 3)).toBe(2);
  });
});

suite('isAmount and requireAmount', () => {
  it('accepts exactly the non-negative safe integers', () => {
    for (const ok of [0, 1, 42, MAX_AMOUNT]) expect(isAmount(ok)).toBe(true);
    for (const bad of [-1, 1.5, MAX_AMOUNT + 1, Number.NaN, Number.POSITIVE_INFINITY, '1', null, undefined, 1n, {}]) {
      expect(isAmount(bad)).toBe(false);
    }
  });

  it('returns a valid amount unchanged', () => {
    expect(requireAmount('spend.tokens', 7)).toBe(7);
    expect(requireAmount('spend.tokens', MAX_AMOUNT)).toBe(MAX_AMOUNT);
  });

  it('throws INVALID_ARGUMENT naming the field and the value it got', () => {
    const error = catchError(() => requireAmount('quota.maxTokensPerPeriod', -3));
    expect(error).toBeInstanceOf(QuotaError);
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.details.field).toBe('quota.maxTokensPerPeriod');
    expect(error.message).toContain('quota.maxTokensPerPeriod');
    expect(error.message).toContain('-3');
    expect(error.message).toContain(String(MAX_AMOUNT));
  });
});

suite('describe', () => {
  it('renders untrusted values short and quoted', () => {
    expect(describe('abc')).toBe('"abc"');
    expect(describe('x'.repeat(100))).toBe(JSON.stringify(`${'x'.repeat(60)}…`));
    expect(describe(3)).toBe('3');
    expect(describe(null)).toBe('null');
    expect(describe(undefined)).toBe('undefined');
    expect(describe(true)).toBe('true');
    expect(describe({ secret: 'do not echo' })).toBe('object');
    expect(describe([1, 2])).toBe('an array of 2');
  });
});

function catchError(fn: () => unknown): QuotaError {
  try {
    fn();
  } catch (error) {
    if (error instanceof QuotaError) return error;
    throw error;
  }
  throw new Error('expected a QuotaError, but nothing was thrown');
}

suite('describe: strings are shortened only past 60 characters', () => {
  it('shows 60 characters whole and cuts 61 to 60 and an ellipsis', () => {
    expect(describe('x'.repeat(60))).toBe(JSON.stringify('x'.repeat(60)));
    expect(describe('x'.repeat(61))).toBe(JSON.stringify(`${'x'.repeat(60)}…`));
  });

  it('names undefined, null and the type of anything else', () => {
    expect(describe(undefined)).toBe('undefined');
    expect(describe(null)).toBe('null');
    expect(describe({})).toBe('object');
  });
});
