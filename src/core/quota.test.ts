import { describe, expect, it } from 'vitest';
import { boundsSpend, isUnlimited, parseQuota, parseStoredQuota, parseRateCeilings, UNLIMITED_QUOTA } from './quota.js';
import { invalidFieldOf as fieldOf } from '../../test/invalid-argument.js';

describe('isUnlimited and boundsSpend', () => {
  it('an unconfigured quota is unlimited and bounds no spend', () => {
    expect(isUnlimited(UNLIMITED_QUOTA)).toBe(true);
    expect(boundsSpend(UNLIMITED_QUOTA)).toBe(false);
    expect(UNLIMITED_QUOTA.period).toBe('monthly');
  });

  it('a ceiling of 0 is a ceiling, not "unlimited"', () => {
    expect(isUnlimited({ period: 'monthly', maxConcurrentRuns: 0 })).toBe(false);
    expect(boundsSpend({ period: 'monthly', maxTokensPerPeriod: 0 })).toBe(true);
    expect(boundsSpend({ period: 'monthly', maxMinorUnitsPerPeriod: 0 })).toBe(true);
  });

  it('a concurrency ceiling alone bounds no spend; rate ceilings alone leave it unlimited', () => {
    expect(boundsSpend({ period: 'daily', maxConcurrentRuns: 3 })).toBe(false);
    expect(isUnlimited({ period: 'daily', rateCeilings: { 'tool://a/b': [{ count: 1, windowSeconds: 60 }] } })).toBe(true);
  });
});

describe('parseQuota', () => {
  it('normalises: absent period is monthly, null ceilings are absent, 0 stays 0', () => {
    expect(parseQuota({})).toEqual({ period: 'monthly' });
    expect(parseQuota({ maxConcurrentRuns: null, maxTokensPerPeriod: undefined })).toEqual({ period: 'monthly' });
    expect(parseQuota({ maxConcurrentRuns: 0, maxTokensPerPeriod: 0, maxMinorUnitsPerPeriod: 0, period: 'daily' })).toEqual({
      maxConcurrentRuns: 0,
      maxTokensPerPeriod: 0,
      maxMinorUnitsPerPeriod: 0,
      period: 'daily',
    });
  });

  it('parses grant rate ceilings', () => {
    expect(
      parseQuota({ maxConcurrentRuns: 4, rateCeilings: { 'tool://payments/refund': [{ count: 2, windowSeconds: 3600 }] } }),
    ).toEqual({
      maxConcurrentRuns: 4,
      period: 'monthly',
      rateCeilings: { 'tool://payments/refund': [{ count: 2, windowSeconds: 3600 }] },
    });
  });

  it('does not change the caller’s object', () => {
    const input = { maxTokensPerPeriod: 10, maxConcurrentRuns: null };
    parseQuota(input);
    expect(input).toEqual({ maxTokensPerPeriod: 10, maxConcurrentRuns: null });
  });

  it('errors name the field', () => {
    expect(fieldOf(() => parseQuota(null))).toBe('quota');
    expect(fieldOf(() => parseQuota([], 'body'))).toBe('body');
    expect(fieldOf(() => parseQuota({ maxRuns: 3 }))).toBe('quota.maxRuns');
    expect(fieldOf(() => parseQuota({ period: 'weekly' }))).toBe('quota.period');
    expect(fieldOf(() => parseQuota({ maxConcurrentRuns: -1 }))).toBe('quota.maxConcurrentRuns');
    expect(fieldOf(() => parseQuota({ maxTokensPerPeriod: 1.5 }))).toBe('quota.maxTokensPerPeriod');
    expect(fieldOf(() => parseQuota({ maxMinorUnitsPerPeriod: '100' }))).toBe('quota.maxMinorUnitsPerPeriod');
    expect(fieldOf(() => parseQuota({ maxTokensPerPeriod: Number.MAX_SAFE_INTEGER + 1 }))).toBe('quota.maxTokensPerPeriod');
    expect(fieldOf(() => parseQuota({ rateCeilings: [] }))).toBe('quota.rateCeilings');
    expect(fieldOf(() => parseQuota({ rateCeilings: { '': [] } }))).toBe('quota.rateCeilings key');
    expect(fieldOf(() => parseQuota({ rateCeilings: { 'tool://a/b': [{ count: -1, windowSeconds: 60 }] } }))).toBe(
      'quota.rateCeilings["tool://a/b"][0].count',
    );
  });

  it('refuses a rate window outside 1 … 2 678 400 s and a count of 0, naming the field and the range', () => {
    const grant = (ceiling: object) => ({ rateCeilings: { search: [ceiling] } });
    for (const windowSeconds of [0, 2_678_401, 99_999_999]) {
      expect(fieldOf(() => parseQuota(grant({ count: 10, windowSeconds })))).toBe('quota.rateCeilings["search"][0].windowSeconds');
    }
    expect(() => parseQuota(grant({ count: 10, windowSeconds: 0 }))).toThrow(/must be from 1 to 2678400 seconds/);
    expect(fieldOf(() => parseQuota(grant({ count: 0, windowSeconds: 60 })))).toBe('quota.rateCeilings["search"][0].count');
    expect(parseQuota(grant({ count: 1, windowSeconds: 2_678_400 })).rateCeilings).toEqual({ search: [{ count: 1, windowSeconds: 2_678_400 }] });
  });

  it('parseStoredQuota still reads a stored ceiling parseQuota would refuse to set', () => {
    const stored = { rateCeilings: { search: [{ count: 0, windowSeconds: 99_999_999 }] } };
    expect(parseStoredQuota(stored).rateCeilings).toEqual({ search: [{ count: 0, windowSeconds: 99_999_999 }] });
    expect(fieldOf(() => parseStoredQuota({ maxRuns: 3 }))).toBe('quota.maxRuns');
  });

  it('an unknown field’s message lists the fields that exist', () => {
    expect(() => parseQuota({ maxRuns: 3 })).toThrow(/maxConcurrentRuns, maxTokensPerPeriod, maxMinorUnitsPerPeriod, period/);
  });
});

describe('parseRateCeilings', () => {
  it('parses a list of { count, windowSeconds }', () => {
    expect(parseRateCeilings([{ count: 3, windowSeconds: 60 }, { count: 20, windowSeconds: 3600 }])).toEqual([
      { count: 3, windowSeconds: 60 },
      { count: 20, windowSeconds: 3600 },
    ]);
    expect(parseRateCeilings([])).toEqual([]);
  });

  it('leaves window range checks to the rate check: an uncountable window parses', () => {
    expect(parseRateCeilings([{ count: 1, windowSeconds: 0 }])).toEqual([{ count: 1, windowSeconds: 0 }]);
  });

  it('errors name the element and field', () => {
    expect(fieldOf(() => parseRateCeilings({ count: 1, windowSeconds: 60 }))).toBe('ceilings');
    expect(fieldOf(() => parseRateCeilings([{ count: 1, windowSeconds: 60 }, { count: 1 }], 'rate'))).toBe(
      'rate[1].windowSeconds',
    );
    expect(fieldOf(() => parseRateCeilings(['3/60']))).toBe('ceilings[0].count');
    expect(fieldOf(() => parseRateCeilings([{ count: 2.5, windowSeconds: 60 }]))).toBe('ceilings[0].count');
  });
});
