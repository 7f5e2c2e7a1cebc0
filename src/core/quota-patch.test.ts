import { describe, expect, it } from 'vitest';

import { applyQuotaPatch } from './quota-patch.js';

const REFUND = 'tool://payments/refund';
const SEARCH = 'tool://web/search';
const current = {
  period: 'daily' as const,
  maxConcurrentRuns: 4,
  maxTokensPerPeriod: 2_000_000,
  rateCeilings: { [REFUND]: [{ count: 20, windowSeconds: 3600 }], [SEARCH]: [{ count: 5, windowSeconds: 60 }] },
};

describe('applyQuotaPatch (JSON Merge Patch, RFC 7396)', () => {
  it('changes the one ceiling named and keeps every other one', () => {
    expect(applyQuotaPatch(current, { maxConcurrentRuns: 8 })).toEqual({ ...current, maxConcurrentRuns: 8 });
  });

  it('null removes a ceiling (unlimited) and period goes back to monthly', () => {
    expect(applyQuotaPatch(current, { maxTokensPerPeriod: null, period: null })).toEqual({
      period: 'monthly',
      maxConcurrentRuns: 4,
      rateCeilings: current.rateCeilings,
    });
  });

  it('merges rate ceilings per grant: replace one, remove one, keep the rest; null drops them all', () => {
    const next = applyQuotaPatch(current, { rateCeilings: { [REFUND]: [{ count: 40, windowSeconds: 3600 }], [SEARCH]: null } });
    expect(next.rateCeilings).toEqual({ [REFUND]: [{ count: 40, windowSeconds: 3600 }] });
    expect(applyQuotaPatch(current, { rateCeilings: { [SEARCH]: null, [REFUND]: null } }).rateCeilings).toBeUndefined();
    expect(applyQuotaPatch(current, { rateCeilings: null }).rateCeilings).toBeUndefined();
  });

  it('a patch of nothing set applies to the unlimited quota', () => {
    expect(applyQuotaPatch(null, { maxConcurrentRuns: 2 })).toEqual({ period: 'monthly', maxConcurrentRuns: 2 });
    expect(applyQuotaPatch(null, {})).toEqual({ period: 'monthly' });
  });

  it('refuses what parseQuota refuses, naming the field, and a patch that is not an object', () => {
    expect(() => applyQuotaPatch(current, { maxConcurrentRun: 8 })).toThrow(/patch\.maxConcurrentRun: is not a quota field/);
    expect(() => applyQuotaPatch(current, { maxTokensPerPeriod: -1 })).toThrow(/patch\.maxTokensPerPeriod/);
    expect(() => applyQuotaPatch(current, { period: 'weekly' })).toThrow(/patch\.period/);
    expect(() => applyQuotaPatch(current, [])).toThrow(/patch: must be an object/);
    expect(() => applyQuotaPatch(current, { rateCeilings: { [REFUND]: [{ count: 0, windowSeconds: 60 }] } })).toThrow(/count/);
  });
});
