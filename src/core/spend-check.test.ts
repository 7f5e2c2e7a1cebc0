import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_AMOUNT } from './amounts.js';
import type { TenantQuota } from './quota.js';
import { checkSpend, type SpendCheck } from './spend-check.js';
import type { Spend } from './spend.js';

const tokens = (n: number): Spend => ({ tokens: n, minorUnits: 0 });
const money = (n: number): Spend => ({ tokens: 0, minorUnits: n });

function check(
  quota: Omit<TenantQuota, 'period'>,
  settled: Spend,
  reserved: Spend,
  requested: Spend,
): ReturnType<typeof checkSpend> {
  const input = { tenant: 'acme', period: '2026-01', settled, reserved, requested };
  return checkSpend({ ...input, quota: { period: 'monthly', ...quota } });
}

const amount = fc.oneof(
  fc.nat({ max: 2_000 }),
  fc.maxSafeNat(),
  fc.integer({ min: MAX_AMOUNT - 2_000, max: MAX_AMOUNT }),
  fc.constantFrom(0, 1, MAX_AMOUNT - 1, MAX_AMOUNT),
);

describe('checkSpend (D1–D3)', () => {
  it('D1 limit 1000: 600 settled + 300 reserved + 100 requested fits; 101 is SpentOut on tokens', () => {
    expect(check({ maxTokensPerPeriod: 1000 }, tokens(600), tokens(300), tokens(100))).toBeNull();
    expect(check({ maxTokensPerPeriod: 1000 }, tokens(600), tokens(300), tokens(101))).toEqual({
      code: 'SpentOut',
      tenant: 'acme',
      period: '2026-01',
      unit: 'tokens',
      settled: 600,
      reserved: 300,
      requested: 101,
      limit: 1000,
      bound: 'tenant',
    });
  });

  it('D2 both ceilings, only minor units overflow: SpentOut in "minor units"; both overflow: "tokens"', () => {
    const quota = { maxTokensPerPeriod: 1000, maxMinorUnitsPerPeriod: 500 };
    const settled = { tokens: 100, minorUnits: 400 };
    const reserved = { tokens: 100, minorUnits: 50 };
    expect(check(quota, settled, reserved, { tokens: 100, minorUnits: 51 })).toMatchObject({
      code: 'SpentOut',
      unit: 'minor units',
      settled: 400,
      reserved: 50,
      requested: 51,
      limit: 500,
    });
    expect(check(quota, { ...settled, tokens: 900 }, reserved, { tokens: 1, minorUnits: 51 })).toMatchObject({
      code: 'SpentOut',
      unit: 'tokens',
      settled: 900,
      reserved: 100,
      requested: 1,
      limit: 1000,
    });
  });

  it('D3 limit 0 admits a request of 0 and refuses a request of 1', () => {
    expect(check({ maxTokensPerPeriod: 0 }, tokens(0), tokens(0), tokens(0))).toBeNull();
    expect(check({ maxTokensPerPeriod: 0 }, tokens(0), tokens(0), tokens(1))).toMatchObject({ code: 'SpentOut', limit: 0 });
    expect(check({ maxMinorUnitsPerPeriod: 0 }, money(0), money(0), money(1))).toMatchObject({ unit: 'minor units' });
  });

  it('D3 maximal values saturate and refuse instead of wrapping', () => {
    const M = MAX_AMOUNT;
    expect(check({ maxTokensPerPeriod: M }, tokens(M), tokens(M), tokens(M))).toMatchObject({ code: 'SpentOut', limit: M });
    expect(check({ maxTokensPerPeriod: M }, tokens(M), tokens(0), tokens(1))).toMatchObject({ code: 'SpentOut' });
    expect(check({ maxTokensPerPeriod: M }, tokens(M - 1), tokens(0), tokens(1))).toBeNull();
    expect(check({ maxTokensPerPeriod: M }, tokens(0), tokens(0), tokens(M))).toBeNull();
    expect(check({ maxTokensPerPeriod: M - 1 }, tokens(1), tokens(M - 1), tokens(0))).toMatchObject({ code: 'SpentOut' });
  });

  it('an absent ceiling never refuses, however much is asked', () => {
    expect(check({}, tokens(MAX_AMOUNT), tokens(MAX_AMOUNT), tokens(MAX_AMOUNT))).toBeNull();
    expect(check({ maxConcurrentRuns: 0 }, tokens(5), money(5), tokens(5))).toBeNull();
    expect(check({ maxMinorUnitsPerPeriod: 10 }, tokens(MAX_AMOUNT), money(5), tokens(MAX_AMOUNT))).toBeNull();
  });

  it('refuses exactly when settled + reserved + requested exceeds the ceiling, in true arithmetic', () => {
    fc.assert(
      fc.property(amount, amount, amount, amount, (settled, reserved, requested, limit) => {
        const over = BigInt(settled) + BigInt(reserved) + BigInt(requested) > BigInt(limit);
        const refusal = check({ maxTokensPerPeriod: limit }, tokens(settled), tokens(reserved), tokens(requested));
        if (over) {
          expect(refusal).toEqual({
            code: 'SpentOut',
            tenant: 'acme',
            period: '2026-01',
            unit: 'tokens',
            settled,
            reserved,
            requested,
            limit,
            bound: 'tenant',
          });
        } else {
          expect(refusal).toBeNull();
        }
      }),
      { numRuns: 500 },
    );
  });

  it('admits an exact fill and refuses one unit more, up to MAX_SAFE_INTEGER', () => {
    // Three parts whose sum is a valid limit, drawn so the sum often sits at the very top.
    const fraction = fc.double({ min: 0, max: 1, noNaN: true });
    const fill = fc
      .tuple(fc.oneof(fc.maxSafeNat(), fc.constant(MAX_AMOUNT)), fraction, fraction)
      .map(([total, x, y]) => {
        const [lo, hi] = x <= y ? [x, y] : [y, x];
        const a = Math.floor(total * lo);
        const b = Math.floor(total * hi) - a;
        return { settled: a, reserved: b, requested: total - a - b, total };
      });
    const unit = fc.constantFrom<keyof Spend>('tokens', 'minorUnits');
    fc.assert(
      fc.property(fill, unit, ({ settled, reserved, requested, total }, key) => {
        const as = (n: number): Spend => ({ tokens: 0, minorUnits: 0, [key]: n });
        const quota = key === 'tokens' ? { maxTokensPerPeriod: total } : { maxMinorUnitsPerPeriod: total };
        expect(check(quota, as(settled), as(reserved), as(requested))).toBeNull();
        if (total > 0) {
          const tighter = key === 'tokens' ? { maxTokensPerPeriod: total - 1 } : { maxMinorUnitsPerPeriod: total - 1 };
          expect(check(tighter, as(settled), as(reserved), as(requested))).not.toBeNull();
        }
      }),
      { numRuns: 500 },
    );
  });

  it('reports the first unit that does not fit, tokens before minor units', () => {
    const spend = fc.record({ tokens: amount, minorUnits: amount });
    fc.assert(
      fc.property(spend, spend, spend, amount, amount, (settled, reserved, requested, tokenLimit, moneyLimit) => {
        const sum = (key: keyof Spend): bigint => BigInt(settled[key]) + BigInt(reserved[key]) + BigInt(requested[key]);
        const expected =
          sum('tokens') > BigInt(tokenLimit) ? 'tokens' : sum('minorUnits') > BigInt(moneyLimit) ? 'minor units' : null;
        const input: SpendCheck = {
          tenant: 't',
          period: '2026-01-05',
          quota: { period: 'daily', maxTokensPerPeriod: tokenLimit, maxMinorUnitsPerPeriod: moneyLimit },
          settled,
          reserved,
          requested,
        };
        expect(checkSpend(input)?.unit ?? null).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});
