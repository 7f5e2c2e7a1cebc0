import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_AMOUNT } from './amounts.js';
import { type Budget, holdFor, parseBudget } from './budget.js';
import { QuotaError } from './errors.js';
import type { TenantQuota } from './quota.js';

const TOKENS_ONLY: TenantQuota = { period: 'monthly', maxTokensPerPeriod: 1_000_000 };
const MONEY_ONLY: TenantQuota = { period: 'monthly', maxMinorUnitsPerPeriod: 5_000_000 };
const BOTH: TenantQuota = { period: 'monthly', maxTokensPerPeriod: 1_000_000, maxMinorUnitsPerPeriod: 5_000_000 };

const amount = fc.oneof(
  fc.nat({ max: 100_000 }),
  fc.maxSafeNat(),
  fc.constantFrom(0, 1, MAX_AMOUNT - 1, MAX_AMOUNT),
);
const width = fc.oneof(fc.nat({ max: 64 }), fc.maxSafeNat());

const fits = (ceiling: number, w: number, perCall: number): boolean =>
  BigInt(ceiling) + BigInt(w) * BigInt(perCall) <= BigInt(MAX_AMOUNT);

describe('holdFor (the hold formula, D4, D5)', () => {
  it('D4 tokens-only quota, budget {maxTokens 1000, maxCallTokens 50}, width 3 holds 1150 tokens and 0 minor units', () => {
    expect(holdFor(TOKENS_ONLY, { maxTokens: 1000, maxCallTokens: 50 }, 3)).toEqual({
      ok: true,
      hold: { tokens: 1150, minorUnits: 0 },
    });
  });

  it('D4 a quota that bounds no spend takes no hold', () => {
    expect(holdFor({ period: 'monthly' }, { maxTokens: 1000, maxCallTokens: 50 }, 3)).toEqual({ ok: true, hold: null });
    expect(holdFor({ period: 'monthly', maxConcurrentRuns: 2 }, {}, 3)).toEqual({ ok: true, hold: null });
  });

  it('D5 tokens bounded and no maxTokens reports maxTokens', () => {
    expect(holdFor(TOKENS_ONLY, { maxCallTokens: 50 }, 3)).toEqual({ ok: false, unit: 'tokens', field: 'maxTokens' });
  });

  it('D5 tokens bounded and only maxCallTokens missing reports maxCallTokens', () => {
    expect(holdFor(TOKENS_ONLY, { maxTokens: 1000 }, 3)).toEqual({ ok: false, unit: 'tokens', field: 'maxCallTokens' });
  });

  it('D5 both units bounded and both undeclared reports the token field', () => {
    expect(holdFor(BOTH, {}, 3)).toEqual({ ok: false, unit: 'tokens', field: 'maxTokens' });
  });

  it('reports the minor-unit fields when money is bounded and left open', () => {
    expect(holdFor(MONEY_ONLY, { maxTokens: 5 }, 1)).toEqual({ ok: false, unit: 'minor units', field: 'maxMinorUnits' });
    expect(holdFor(MONEY_ONLY, { maxMinorUnits: 5 }, 1)).toEqual({
      ok: false,
      unit: 'minor units',
      field: 'maxCallMinorUnits',
    });
    expect(holdFor(BOTH, { maxTokens: 1, maxCallTokens: 1 }, 1)).toEqual({
      ok: false,
      unit: 'minor units',
      field: 'maxMinorUnits',
    });
  });

  it('holds only the bounded unit even when the budget declares both', () => {
    const budget: Budget = { maxTokens: 10, maxCallTokens: 2, maxMinorUnits: 100, maxCallMinorUnits: 7 };
    expect(holdFor(MONEY_ONLY, budget, 2)).toEqual({ ok: true, hold: { tokens: 0, minorUnits: 114 } });
    expect(holdFor(BOTH, budget, 2)).toEqual({ ok: true, hold: { tokens: 14, minorUnits: 114 } });
  });

  it('a ceiling of 0 in the quota still bounds the unit and needs the budget fields', () => {
    expect(holdFor({ period: 'daily', maxTokensPerPeriod: 0 }, {}, 1)).toEqual({ ok: false, unit: 'tokens', field: 'maxTokens' });
  });

  it('is ceiling + width × per-call for each bounded unit exactly, or INVALID_ARGUMENT beyond MAX_SAFE_INTEGER', () => {
    fc.assert(
      fc.property(amount, amount, amount, amount, width, (maxTokens, maxCallTokens, maxMinorUnits, maxCallMinorUnits, w) => {
        const budget = { maxTokens, maxCallTokens, maxMinorUnits, maxCallMinorUnits };
        if (!fits(maxTokens, w, maxCallTokens)) {
          expect(() => holdFor(BOTH, budget, w)).toThrow(/budget\.maxTokens/);
        } else if (!fits(maxMinorUnits, w, maxCallMinorUnits)) {
          expect(() => holdFor(BOTH, budget, w)).toThrow(/budget\.maxMinorUnits/);
        } else {
          expect(holdFor(BOTH, budget, w)).toEqual({
            ok: true,
            hold: { tokens: maxTokens + w * maxCallTokens, minorUnits: maxMinorUnits + w * maxCallMinorUnits },
          });
        }
      }),
    );
  });

  it('refuses a hold beyond the largest amount instead of saturating (P7.2)', () => {
    expect(holdFor(TOKENS_ONLY, { maxTokens: MAX_AMOUNT, maxCallTokens: 0 }, 1)).toEqual({
      ok: true,
      hold: { tokens: MAX_AMOUNT, minorUnits: 0 },
    });
    expect(() => holdFor(TOKENS_ONLY, { maxTokens: MAX_AMOUNT, maxCallTokens: 1 }, 1)).toThrow(
      /budget\.maxTokens: .*9007199254740992.*largest amount 9007199254740991/,
    );
    expect(() => holdFor(MONEY_ONLY, { maxMinorUnits: 1, maxCallMinorUnits: MAX_AMOUNT }, MAX_AMOUNT)).toThrow(
      /budget\.maxMinorUnits/,
    );
  });

  it('width 0 holds just the ceiling', () => {
    fc.assert(
      fc.property(amount, amount, amount, amount, (maxTokens, maxCallTokens, maxMinorUnits, maxCallMinorUnits) => {
        expect(holdFor(BOTH, { maxTokens, maxCallTokens, maxMinorUnits, maxCallMinorUnits }, 0)).toEqual({
          ok: true,
          hold: { tokens: maxTokens, minorUnits: maxMinorUnits },
        });
      }),
    );
  });

  it('always reports a token field first when both units are left open in any way', () => {
    const tokenGap = fc.constantFrom<Budget>({}, { maxTokens: 1 }, { maxCallTokens: 1 });
    const moneyGap = fc.constantFrom<Budget>({}, { maxMinorUnits: 1 }, { maxCallMinorUnits: 1 });
    fc.assert(
      fc.property(tokenGap, moneyGap, width, (tokens, money, w) => {
        const outcome = holdFor(BOTH, { ...tokens, ...money }, w);
        expect(outcome.ok).toBe(false);
        if (!outcome.ok) {
          expect(outcome.unit).toBe('tokens');
          expect(outcome.field).toBe(tokens.maxTokens === undefined ? 'maxTokens' : 'maxCallTokens');
        }
      }),
    );
  });
});

describe('parseBudget', () => {
  it('null and undefined mean no budget declared; null fields are undeclared', () => {
    expect(parseBudget(undefined)).toEqual({});
    expect(parseBudget(null)).toEqual({});
    expect(parseBudget({ maxTokens: 10, maxCallTokens: null })).toEqual({ maxTokens: 10 });
    expect(parseBudget({ maxTokens: 1, maxCallTokens: 2, maxMinorUnits: 3, maxCallMinorUnits: 0 })).toEqual({
      maxTokens: 1,
      maxCallTokens: 2,
      maxMinorUnits: 3,
      maxCallMinorUnits: 0,
    });
  });

  it('errors name the field', () => {
    const field = (fn: () => unknown): unknown => {
      try {
        fn();
      } catch (error) {
        expect(error).toBeInstanceOf(QuotaError);
        return (error as QuotaError).details.field;
      }
      return 'nothing thrown';
    };
    expect(field(() => parseBudget('1000'))).toBe('budget');
    expect(field(() => parseBudget([1], 'run.budget'))).toBe('run.budget');
    expect(field(() => parseBudget({ maxTokenz: 1 }))).toBe('budget.maxTokenz');
    expect(field(() => parseBudget({ maxTokens: -1 }))).toBe('budget.maxTokens');
    expect(field(() => parseBudget({ maxCallMinorUnits: 0.5 }, 'b'))).toBe('b.maxCallMinorUnits');
    expect(() => parseBudget({ maxTokenz: 1 })).toThrow(/maxTokens, maxCallTokens, maxMinorUnits, maxCallMinorUnits/);
  });
});

describe('budget edges', () => {
  it('null and undefined members are not declared', () => {
    expect(parseBudget({ maxTokens: null, maxCallTokens: undefined, maxMinorUnits: 5 })).toEqual({ maxMinorUnits: 5 });
    expect(Object.keys(parseBudget({ maxTokens: undefined }))).toEqual([]);
  });

  it('refuses a budget that is not an object, saying what it got', () => {
    expect(() => parseBudget(5)).toThrow('budget: must be an object, got 5');
  });

  it('a hold past the largest amount names the total field of its unit and the sum', () => {
    const tokens: TenantQuota = { period: 'monthly', maxTokensPerPeriod: 1 };
    const minor: TenantQuota = { period: 'monthly', maxMinorUnitsPerPeriod: 1 };
    expect(() => holdFor(tokens, { maxTokens: MAX_AMOUNT, maxCallTokens: 1 }, 1)).toThrow(
      /^budget\.maxTokens: would take the hold maxTokens \+ width × maxCallTokens to 9007199254740992,/,
    );
    expect(() => holdFor(minor, { maxMinorUnits: MAX_AMOUNT, maxCallMinorUnits: 1 }, 1)).toThrow(
      /^budget\.maxMinorUnits: would take the hold maxMinorUnits \+ width × maxCallMinorUnits to 9007199254740992,/,
    );
  });
});
