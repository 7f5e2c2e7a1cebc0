import { describe, expect, it } from 'vitest';

import { isQuotaError } from './errors.js';
import { applyPlanePatch, boundsPlane, parsePlaneCeiling, planeAgentLimit, tenantWeight } from './plane-ceiling.js';
import { applyQuotaPatch } from './quota-patch.js';
import { holdQuotaFor, parseQuota } from './quota.js';

function fieldOf(action: () => unknown): string | undefined {
  try {
    action();
  } catch (error) {
    if (isQuotaError(error, 'INVALID_ARGUMENT')) return (error.details as { field?: string }).field;
    throw error;
  }
  return undefined;
}

describe('parsePlaneCeiling (issue 12)', () => {
  it('keeps what is set, drops nulls and agents left without a ceiling', () => {
    expect(
      parsePlaneCeiling({ maxConcurrentRuns: 50, agents: { 'refund-bot': { maxConcurrentRuns: 5 }, idle: { maxConcurrentRuns: null } }, weights: { acme: 2 } }),
    ).toEqual({ maxConcurrentRuns: 50, agents: { 'refund-bot': { maxConcurrentRuns: 5 } }, weights: { acme: 2 } });
    expect(parsePlaneCeiling({ maxConcurrentRuns: null })).toEqual({});
  });

  it('refuses bad input naming the field', () => {
    expect(fieldOf(() => parsePlaneCeiling({ maxConcurrentRuns: -1 }))).toBe('plane.maxConcurrentRuns');
    expect(fieldOf(() => parsePlaneCeiling({ maxRuns: 1 }))).toBe('plane.maxRuns');
    expect(fieldOf(() => parsePlaneCeiling({ agents: { bot: { maxTokensPerPeriod: 1 } } }))).toBe('plane.agents["bot"].maxTokensPerPeriod');
    expect(fieldOf(() => parsePlaneCeiling({ weights: { acme: 0 } }))).toBe('plane.weights["acme"]');
    expect(fieldOf(() => parsePlaneCeiling({ weights: { acme: 1.5 } }))).toBe('plane.weights["acme"]');
    expect(fieldOf(() => parsePlaneCeiling({ agents: { ' bot': { maxConcurrentRuns: 1 } } }))).toBe('plane.agents key');
    expect(fieldOf(() => parsePlaneCeiling([]))).toBe('plane');
  });

  it('reads limits and weights, and an agent named __proto__ is an own member', () => {
    const plane = parsePlaneCeiling(JSON.parse('{"agents": {"__proto__": {"maxConcurrentRuns": 1}}}'));
    expect(planeAgentLimit(plane, '__proto__')).toBe(1);
    expect(planeAgentLimit(plane, 'toString')).toBeUndefined();
    expect(boundsPlane(plane)).toBe(true);
    expect(boundsPlane({ weights: { acme: 3 } })).toBe(false);
    expect(tenantWeight({ weights: { acme: 3 } }, 'acme')).toBe(3);
    expect(tenantWeight({ weights: { acme: 3 } }, 'globex')).toBe(1);
  });

  it('applyPlanePatch merges agents and weights per key and null removes', () => {
    const current = { maxConcurrentRuns: 10, agents: { a: { maxConcurrentRuns: 1 }, b: { maxConcurrentRuns: 2 } }, weights: { acme: 2 } };
    expect(applyPlanePatch(current, { maxConcurrentRuns: null, agents: { a: null, c: { maxConcurrentRuns: 3 } }, weights: { globex: 4 } })).toEqual({
      agents: { b: { maxConcurrentRuns: 2 }, c: { maxConcurrentRuns: 3 } },
      weights: { acme: 2, globex: 4 },
    });
    expect(applyPlanePatch(null, { maxConcurrentRuns: 3 })).toEqual({ maxConcurrentRuns: 3 });
    expect(fieldOf(() => applyPlanePatch(current, { weights: { acme: 0 } }))).toBe('patch.weights["acme"]');
  });
});

describe('per-agent ceilings in a quota (issue 12)', () => {
  it('parseQuota keeps agent ceilings and names a bad one', () => {
    expect(parseQuota({ agents: { bot: { maxConcurrentRuns: 2, maxTokensPerPeriod: 10, maxMinorUnitsPerPeriod: null } } })).toEqual({
      period: 'monthly',
      agents: { bot: { maxConcurrentRuns: 2, maxTokensPerPeriod: 10 } },
    });
    expect(fieldOf(() => parseQuota({ agents: { bot: { maxConcurrentRuns: -2 } } }))).toBe('quota.agents["bot"].maxConcurrentRuns');
    expect(fieldOf(() => parseQuota({ agents: { bot: { rateCeilings: {} } } }))).toBe('quota.agents["bot"].rateCeilings');
    expect(fieldOf(() => parseQuota({ agents: [] }))).toBe('quota.agents');
    expect(parseQuota({ agents: {} })).toEqual({ period: 'monthly' });
  });

  it('applyQuotaPatch merges agents two levels deep: null removes a ceiling or an agent', () => {
    const current = parseQuota({ maxConcurrentRuns: 5, agents: { bot: { maxConcurrentRuns: 2, maxTokensPerPeriod: 10 }, other: { maxConcurrentRuns: 1 } } });
    expect(applyQuotaPatch(current, { agents: { bot: { maxConcurrentRuns: null }, other: null, new: { maxMinorUnitsPerPeriod: 7 } } })).toEqual({
      period: 'monthly',
      maxConcurrentRuns: 5,
      agents: { bot: { maxTokensPerPeriod: 10 }, new: { maxMinorUnitsPerPeriod: 7 } },
    });
    expect(applyQuotaPatch(current, { agents: null })).toEqual({ period: 'monthly', maxConcurrentRuns: 5 });
    expect(applyQuotaPatch(current, { agents: { other: { maxConcurrentRuns: null } } }).agents).toEqual({ bot: { maxConcurrentRuns: 2, maxTokensPerPeriod: 10 } });
    expect(fieldOf(() => applyQuotaPatch(current, { agents: { bot: 3 } }))).toBe('patch.agents["bot"]');
  });

  it("holdQuotaFor bounds a unit the run's agent bounds, and leaves other runs' quota as is", () => {
    const quota = parseQuota({ agents: { bot: { maxTokensPerPeriod: 100 } } });
    expect(holdQuotaFor(quota, 'bot').maxTokensPerPeriod).toBe(100);
    expect(holdQuotaFor(quota, 'other')).toBe(quota);
    expect(holdQuotaFor(quota, null)).toBe(quota);
    const tenantBound = parseQuota({ maxTokensPerPeriod: 1000, agents: { bot: { maxTokensPerPeriod: 100, maxMinorUnitsPerPeriod: 5 } } });
    expect(holdQuotaFor(tenantBound, 'bot')).toMatchObject({ maxTokensPerPeriod: 1000, maxMinorUnitsPerPeriod: 5 });
  });
});
