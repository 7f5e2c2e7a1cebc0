import { describe, expect, it } from 'vitest';

import { QuotaError } from './errors.js';
import { isUnlimited, parseQuota, parseStoredQuota } from './quota.js';
import { invalidFieldOf } from '../../test/invalid-argument.js';

// Rules of quota parsing that mutation testing found unasserted: each test fails when
// the rule it names is changed.

describe('parseQuota: rateCeilings', () => {
  it.each([5, 'tool://a/b', true, [], [{ count: 1, windowSeconds: 1 }]])('refuses rateCeilings %j, naming quota.rateCeilings', (value) => {
    expect(invalidFieldOf(() => parseQuota({ rateCeilings: value }))).toBe('quota.rateCeilings');
    expect(invalidFieldOf(() => parseStoredQuota({ rateCeilings: value }))).toBe('quota.rateCeilings');
  });

  it('names the field it was given as the root', () => {
    expect(invalidFieldOf(() => parseQuota({ rateCeilings: 5 }, 'body'))).toBe('body.rateCeilings');
  });

  it('reads rateCeilings: null as absent, like a null ceiling', () => {
    const quota = parseQuota({ rateCeilings: null, maxConcurrentRuns: null });
    expect(quota).toEqual({ period: 'monthly' });
    expect('rateCeilings' in quota).toBe(false);
    expect('maxConcurrentRuns' in quota).toBe(false);
  });

  it('keeps each grant\'s ceilings under its own key', () => {
    const quota = parseQuota({
      rateCeilings: { 'tool://a/x': [{ count: 2, windowSeconds: 60 }], 'tool://a/y': [{ count: 5, windowSeconds: 1 }] },
    });
    expect(quota.rateCeilings).toEqual({
      'tool://a/x': [{ count: 2, windowSeconds: 60 }],
      'tool://a/y': [{ count: 5, windowSeconds: 1 }],
    });
  });

  it('refuses a grant key that is not an identifier, naming the key field', () => {
    expect(invalidFieldOf(() => parseQuota({ rateCeilings: { '': [] } }))).toBe('quota.rateCeilings key');
  });

  it('refuses a grant whose ceilings are not an array, naming the grant', () => {
    expect(invalidFieldOf(() => parseQuota({ rateCeilings: { 'tool://a/x': 3 } }))).toBe('quota.rateCeilings["tool://a/x"]');
  });
});

describe('isUnlimited: any one ceiling makes a quota limited', () => {
  it('is false when only a token ceiling is set', () => {
    expect(isUnlimited({ period: 'monthly', maxTokensPerPeriod: 1000 })).toBe(false);
  });

  it('is false when only a minor-unit ceiling is set', () => {
    expect(isUnlimited({ period: 'daily', maxMinorUnitsPerPeriod: 1000 })).toBe(false);
  });

  it('is false when only a concurrency ceiling is set, and true with rate ceilings alone', () => {
    expect(isUnlimited({ period: 'monthly', maxConcurrentRuns: 3 })).toBe(false);
    expect(isUnlimited({ period: 'monthly', rateCeilings: { 'tool://a/x': [{ count: 1, windowSeconds: 1 }] } })).toBe(true);
  });
});

describe('parseQuota: what is not an object, and absent ceilings', () => {
  it('refuses a quota that is a number, a string, null or an array, naming the field', () => {
    for (const bad of [5, 'monthly', null, [], true]) {
      expect(() => parseQuota(bad)).toThrow(QuotaError);
      try {
        parseQuota(bad, 'quota');
      } catch (error) {
        expect((error as QuotaError).details.field).toBe('quota');
        expect((error as QuotaError).message).toMatch(/^quota: must be an object, got /);
      }
    }
  });

  it('leaves an absent or null ceiling out of the parsed quota, not present as undefined', () => {
    expect(Object.keys(parseQuota({ maxConcurrentRuns: 2 }))).toEqual(['period', 'maxConcurrentRuns']);
    expect(Object.keys(parseQuota({ maxTokensPerPeriod: 5, maxMinorUnitsPerPeriod: null }))).toEqual(['period', 'maxTokensPerPeriod']);
    expect(Object.keys(parseQuota({ maxMinorUnitsPerPeriod: 5, maxTokensPerPeriod: null }))).toEqual(['period', 'maxMinorUnitsPerPeriod']);
    expect(Object.keys(parseQuota({}))).toEqual(['period']);
  });

  it('names the periods it accepts', () => {
    expect(() => parseQuota({ period: 'weekly' })).toThrow("quota.period: must be one of monthly, daily, got \"weekly\"");
  });
});
