import { describe, expect, it } from 'vitest';

import { costOf, parsePriceTable } from '../../src/adapters/model-price.js';
import { QuotaError } from '../../src/core/errors.js';

describe('costOf', () => {
  const price = { inputPerMillion: 3_000_000, outputPerMillion: 15_000_000, cacheReadPerMillion: 300_000, cacheWritePerMillion: 3_750_000 };

  it('prices uncached input, cache reads, cache writes and output each at their rate', () => {
    // 600 × 3 + 200 × 0.3 + 200 × 3.75 + 100 × 15 = 1 800 + 60 + 750 + 1 500
    expect(costOf(price, { input: 1_000, output: 100, cacheRead: 200, cacheWrite: 200 })).toBe(4_110);
  });

  it('rounds a fraction of a minor unit up, and charges nothing for nothing', () => {
    expect(costOf({ inputPerMillion: 1, outputPerMillion: 1 }, { input: 1, output: 0, cacheRead: 0, cacheWrite: 0 })).toBe(1);
    expect(costOf({ inputPerMillion: 1, outputPerMillion: 1 }, { input: 1_000_000, output: 1, cacheRead: 0, cacheWrite: 0 })).toBe(2);
    expect(costOf(price, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 })).toBe(0);
  });

  it('prices cache reads at the input rate when the table gives no cache rate', () => {
    expect(costOf({ inputPerMillion: 2_000_000, outputPerMillion: 0 }, { input: 10, output: 0, cacheRead: 10, cacheWrite: 0 })).toBe(20);
  });

  it('is exact for amounts a float would round', () => {
    const huge = { input: 9_007_199_254, output: 0, cacheRead: 0, cacheWrite: 0 };
    // 9 007 199 254 × 999 999 / 10^6 = 9 007 190 246.800746 → 9 007 190 247
    expect(costOf({ inputPerMillion: 999_999, outputPerMillion: 0 }, huge)).toBe(9_007_190_247);
  });
});

describe('parsePriceTable', () => {
  it('names the bad entry and member', () => {
    for (const [table, field] of [
      [{ 'gpt-x': { inputPerMillion: 1 } }, 'prices["gpt-x"].outputPerMillion'],
      [{ 'gpt-x': { inputPerMillion: 1.5, outputPerMillion: 1 } }, 'prices["gpt-x"].inputPerMillion'],
      [{ 'gpt-x': { inputPerMillion: 1, outputPerMillion: 1, cacheReadPerMillion: -1 } }, 'prices["gpt-x"].cacheReadPerMillion'],
      [[], 'prices'],
    ] as const) {
      let thrown: unknown;
      try {
        parsePriceTable(table);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(QuotaError);
      expect((thrown as QuotaError).details.field).toBe(field);
    }
  });
});
