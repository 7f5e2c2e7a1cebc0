import { describe, expect, it } from 'vitest';

import { applyQuotaPatch } from './quota-patch.js';
import { invalidFieldOf as fieldOf } from '../../test/invalid-argument.js';

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

  it('a member given as undefined is absent and keeps its value, at every depth (never lifts a ceiling)', () => {
    const withAgents = applyQuotaPatch(current, { agents: { 'refund-bot': { maxConcurrentRuns: 2, maxTokensPerPeriod: 500 } } });
    expect(applyQuotaPatch(withAgents, { maxConcurrentRuns: undefined, maxTokensPerPeriod: undefined, period: undefined })).toEqual(withAgents);
    expect(applyQuotaPatch(withAgents, { rateCeilings: undefined, agents: undefined })).toEqual(withAgents);
    expect(applyQuotaPatch(withAgents, { rateCeilings: { [REFUND]: undefined }, agents: { 'refund-bot': undefined } })).toEqual(withAgents);
    expect(applyQuotaPatch(withAgents, { agents: { 'refund-bot': { maxTokensPerPeriod: undefined, maxConcurrentRuns: 3 } } }).agents).toEqual({
      'refund-bot': { maxConcurrentRuns: 3, maxTokensPerPeriod: 500 },
    });
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

describe('applyQuotaPatch: refusals and a tenant with no quota', () => {
  it('refuses a patch that is not an object, naming the field it was given', () => {
    for (const bad of [5, 'x', null, [], true]) expect(fieldOf(() => applyQuotaPatch(current, bad, 'body'))).toBe('body');
  });

  it('refuses rateCeilings that is not an object of grants', () => {
    for (const bad of [5, 'x', [], [{ count: 1, windowSeconds: 60 }]]) {
      expect(fieldOf(() => applyQuotaPatch(current, { rateCeilings: bad }))).toBe('patch.rateCeilings');
    }
    expect(() => applyQuotaPatch(null, { rateCeilings: 5 })).toThrow(
      'patch.rateCeilings: must be an object of grant → ceilings (null removes a grant), got 5',
    );
  });

  it('refuses agents that is not an object of agent names, naming patch.agents', () => {
    for (const bad of [5, 'x', [], [{ maxConcurrentRuns: 1 }]]) {
      expect(fieldOf(() => applyQuotaPatch(current, { agents: bad }))).toBe('patch.agents');
    }
    expect(() => applyQuotaPatch(null, { agents: 5 })).toThrow(
      'patch.agents: must be an object of agent name → ceilings (null removes an agent), got 5',
    );
  });

  it('adds a grant to a tenant with no quota or no ceilings, and keeps the grants already there', () => {
    expect(applyQuotaPatch(null, { rateCeilings: { [REFUND]: [{ count: 1, windowSeconds: 60 }] } })).toEqual({
      period: 'monthly',
      rateCeilings: { [REFUND]: [{ count: 1, windowSeconds: 60 }] },
    });
    const added = applyQuotaPatch(current, { rateCeilings: { 'tool://new/grant': [{ count: 2, windowSeconds: 10 }] } });
    expect(added.rateCeilings).toEqual({ ...current.rateCeilings, 'tool://new/grant': [{ count: 2, windowSeconds: 10 }] });
  });
});
