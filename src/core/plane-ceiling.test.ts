import { describe, expect, it } from 'vitest';

import { applyPlanePatch, boundsPlane, NO_PLANE_CEILING, parsePlaneCeiling, planeAgentLimit, tenantWeight, type PlaneCeiling } from './plane-ceiling.js';
import { applyQuotaPatch } from './quota-patch.js';
import { holdQuotaFor, parseQuota } from './quota.js';
import { invalidFieldOf as fieldOf } from '../../test/invalid-argument.js';

describe('parsePlaneCeiling', () => {
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

describe('per-agent ceilings in a quota (K7, K8)', () => {
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

describe('reading a plane-wide ceiling: absent parts bound nothing (K1)', () => {
  it('no plane at all (null, undefined or the empty one) bounds nothing, limits no agent and weighs every tenant 1', () => {
    for (const plane of [null, undefined, NO_PLANE_CEILING]) {
      expect(boundsPlane(plane)).toBe(false);
      expect(planeAgentLimit(plane, 'bot')).toBeUndefined();
      expect(tenantWeight(plane, 'acme')).toBe(1);
    }
  });

  it('a plane-wide ceiling of 0 bounds the plane, as does one agent ceiling of 0', () => {
    expect(boundsPlane({ maxConcurrentRuns: 0 })).toBe(true);
    expect(boundsPlane({ agents: { bot: { maxConcurrentRuns: 0 } } })).toBe(true);
  });

  it('agents bound the plane only when at least one of them has a ceiling', () => {
    expect(boundsPlane({ agents: {} })).toBe(false);
    expect(boundsPlane({ agents: { idle: {} } })).toBe(false);
    expect(boundsPlane({ agents: { idle: {}, bot: { maxConcurrentRuns: 2 } } })).toBe(true);
    expect(boundsPlane({ agents: { bot: { maxConcurrentRuns: 2 }, idle: {} } })).toBe(true);
  });

  it('planeAgentLimit: a run without an agent, an agent not listed, or one listed without a ceiling has no plane-wide limit', () => {
    const plane: PlaneCeiling = { maxConcurrentRuns: 9, agents: { bot: { maxConcurrentRuns: 3 }, idle: {} } };
    expect(planeAgentLimit(plane, 'bot')).toBe(3);
    expect(planeAgentLimit(plane, null)).toBeUndefined();
    expect(planeAgentLimit(plane, undefined)).toBeUndefined();
    expect(planeAgentLimit(plane, 'other')).toBeUndefined();
    expect(planeAgentLimit(plane, 'idle')).toBeUndefined();
    expect(planeAgentLimit({ maxConcurrentRuns: 9 }, 'bot')).toBeUndefined();
    expect(planeAgentLimit({ agents: { bot: { maxConcurrentRuns: 0 } } }, 'bot')).toBe(0);
  });

  it("a run without an agent is not limited by agents literally named 'null' or 'undefined'", () => {
    const plane: PlaneCeiling = { agents: { null: { maxConcurrentRuns: 1 }, undefined: { maxConcurrentRuns: 2 } } };
    expect(planeAgentLimit(plane, 'undefined')).toBe(2);
    expect(planeAgentLimit(plane, null)).toBeUndefined();
    expect(planeAgentLimit(plane, undefined)).toBeUndefined();
  });

  it('tenantWeight reads own members only and defaults to 1 for a tenant not listed', () => {
    expect(tenantWeight({ maxConcurrentRuns: 9 }, 'acme')).toBe(1);
    expect(tenantWeight({ weights: { acme: 3 } }, 'toString')).toBe(1);
    expect(tenantWeight({ weights: { acme: 3, globex: 5 } }, 'globex')).toBe(5);
  });
});

describe('parsePlaneCeiling: what it keeps', () => {
  it('an empty object, and members given as null, are no plane-wide ceiling at all', () => {
    expect(parsePlaneCeiling({})).toEqual({});
    const parsed = parsePlaneCeiling({ maxConcurrentRuns: null, agents: null, weights: null });
    expect(Object.keys(parsed)).toEqual([]);
  });

  it('keeps a ceiling of 0 (allows nothing) and the largest amount', () => {
    expect(parsePlaneCeiling({ maxConcurrentRuns: 0 })).toEqual({ maxConcurrentRuns: 0 });
    expect(parsePlaneCeiling({ maxConcurrentRuns: Number.MAX_SAFE_INTEGER })).toEqual({ maxConcurrentRuns: Number.MAX_SAFE_INTEGER });
    expect(parsePlaneCeiling({ agents: { bot: { maxConcurrentRuns: 0 } } })).toEqual({ agents: { bot: { maxConcurrentRuns: 0 } } });
  });

  it('drops an agent given as {} or with an absent ceiling, and leaves out agents when none is left', () => {
    const parsed = parsePlaneCeiling({ agents: { idle: {}, gone: { maxConcurrentRuns: undefined }, off: { maxConcurrentRuns: null } } });
    expect(Object.keys(parsed)).toEqual([]);
    expect(parsePlaneCeiling({ agents: { idle: {}, bot: { maxConcurrentRuns: 1 } } })).toEqual({ agents: { bot: { maxConcurrentRuns: 1 } } });
  });

  it('a weight of 1 is the least accepted, 0 the first refused; a null weight is left out, and weights with it when none is left', () => {
    expect(parsePlaneCeiling({ weights: { acme: 1 } })).toEqual({ weights: { acme: 1 } });
    expect(fieldOf(() => parsePlaneCeiling({ weights: { acme: 0 } }))).toBe('plane.weights["acme"]');
    expect(Object.keys(parsePlaneCeiling({ weights: { acme: null } }))).toEqual([]);
    expect(parsePlaneCeiling({ weights: { acme: null, globex: 2 } })).toEqual({ weights: { globex: 2 } });
  });

  it('a weight below 1 is refused saying why, not as a bad amount', () => {
    expect(() => parsePlaneCeiling({ weights: { acme: 0 } })).toThrow(/^plane\.weights\["acme"\]: must be at least 1/);
  });

  it('a tenant named __proto__ carries its weight as an own member', () => {
    const plane = parsePlaneCeiling(JSON.parse('{"weights": {"__proto__": 4}}'));
    expect(Object.keys(plane.weights ?? {})).toEqual(['__proto__']);
    expect(tenantWeight(plane, '__proto__')).toBe(4);
    expect(Object.getOwnPropertyDescriptor(plane.weights, '__proto__')).toEqual({ value: 4, enumerable: true, writable: true, configurable: true });
  });
});

describe('parsePlaneCeiling: what it refuses, naming the field', () => {
  it.each([[null], [5], ['plane'], [true], [[]]])('a plane ceiling that is %j is refused as `plane`', (value) => {
    expect(fieldOf(() => parsePlaneCeiling(value))).toBe('plane');
  });

  it('names fields under the root it was given', () => {
    expect(fieldOf(() => parsePlaneCeiling(5, 'body'))).toBe('body');
    expect(fieldOf(() => parsePlaneCeiling({ maxRuns: 1 }, 'body'))).toBe('body.maxRuns');
    expect(fieldOf(() => parsePlaneCeiling({ agents: { bot: { maxConcurrentRuns: -1 } } }, 'body'))).toBe('body.agents["bot"].maxConcurrentRuns');
  });

  it('an unknown member is refused with the members that exist', () => {
    expect(() => parsePlaneCeiling({ maxRuns: 1 })).toThrow(/^plane\.maxRuns: .*maxConcurrentRuns, agents, weights, alertThresholds$/);
  });

  it.each([[5], ['bot'], [true], [[]]])('agents given as %j are refused as `plane.agents`', (agents) => {
    expect(fieldOf(() => parsePlaneCeiling({ agents }))).toBe('plane.agents');
  });

  it.each([[3], [null], ['x'], [[]]])("an agent's ceiling given as %j is refused naming the agent", (ceiling) => {
    expect(fieldOf(() => parsePlaneCeiling({ agents: { bot: ceiling } }))).toBe('plane.agents["bot"]');
  });

  it("an agent's ceiling that is not a non-negative safe integer is refused naming it", () => {
    expect(fieldOf(() => parsePlaneCeiling({ agents: { bot: { maxConcurrentRuns: 1.5 } } }))).toBe('plane.agents["bot"].maxConcurrentRuns');
    expect(fieldOf(() => parsePlaneCeiling({ agents: { bot: { maxConcurrentRuns: '2' } } }))).toBe('plane.agents["bot"].maxConcurrentRuns');
  });

  it('an agent member other than maxConcurrentRuns is refused even when the ceiling is there too', () => {
    expect(fieldOf(() => parsePlaneCeiling({ agents: { bot: { maxConcurrentRuns: 1, maxTokensPerPeriod: 5 } } }))).toBe(
      'plane.agents["bot"].maxTokensPerPeriod',
    );
  });

  it.each([[5], ['acme'], [[]]])('weights given as %j are refused as `plane.weights`', (weights) => {
    expect(fieldOf(() => parsePlaneCeiling({ weights }))).toBe('plane.weights');
  });

  it("a weight key must be a customer tenant: '*' and quotaplane's own chains are refused", () => {
    expect(fieldOf(() => parsePlaneCeiling({ weights: { '*': 2 } }))).toBe('plane.weights key');
    expect(fieldOf(() => parsePlaneCeiling({ weights: { '*': null } }))).toBe('plane.weights key');
    expect(fieldOf(() => parsePlaneCeiling({ weights: { 'quotaplane:plane': 2 } }))).toBe('plane.weights key');
    expect(fieldOf(() => parsePlaneCeiling({ weights: { '': 2 } }))).toBe('plane.weights key');
  });

  it("a null weight under a reserved name is accepted and removes nothing else, so a stored one can be patched away", () => {
    expect(parsePlaneCeiling({ weights: { 'quotaplane:plane': null, acme: 2 } })).toEqual({ weights: { acme: 2 } });
  });

  it('a weight that is not a whole number is refused naming the tenant', () => {
    expect(fieldOf(() => parsePlaneCeiling({ weights: { acme: '2' } }))).toBe('plane.weights["acme"]');
    expect(fieldOf(() => parsePlaneCeiling({ weights: { acme: -1 } }))).toBe('plane.weights["acme"]');
  });
});

describe('applyPlanePatch: JSON Merge Patch of the plane-wide ceiling', () => {
  const current: PlaneCeiling = { maxConcurrentRuns: 10, agents: { a: { maxConcurrentRuns: 1 }, b: { maxConcurrentRuns: 2 } }, weights: { acme: 2, globex: 3 } };

  it('an empty patch keeps everything', () => {
    expect(applyPlanePatch(current, {})).toEqual(current);
  });

  it('a member absent from the patch keeps its value; a given one replaces it', () => {
    expect(applyPlanePatch(current, { maxConcurrentRuns: 20 })).toEqual({ ...current, maxConcurrentRuns: 20 });
  });

  it('a member given as undefined is absent and keeps its value, at every depth (never lifts a ceiling)', () => {
    expect(applyPlanePatch(current, { maxConcurrentRuns: undefined, agents: undefined, weights: undefined })).toEqual(current);
    expect(applyPlanePatch(current, { agents: { a: undefined }, weights: { acme: undefined } })).toEqual(current);
  });

  it('agents: null removes every agent ceiling; weights: null every weight', () => {
    expect(applyPlanePatch(current, { agents: null })).toEqual({ maxConcurrentRuns: 10, weights: { acme: 2, globex: 3 } });
    expect(applyPlanePatch(current, { weights: null })).toEqual({ maxConcurrentRuns: 10, agents: current.agents });
  });

  it('an agent or weight patched with a new value replaces only that key', () => {
    expect(applyPlanePatch(current, { agents: { a: { maxConcurrentRuns: 7 } } }).agents).toEqual({ a: { maxConcurrentRuns: 7 }, b: { maxConcurrentRuns: 2 } });
    expect(applyPlanePatch(current, { weights: { acme: 5 } }).weights).toEqual({ acme: 5, globex: 3 });
  });

  it('removing the last agent or weight leaves the member out', () => {
    const one: PlaneCeiling = { agents: { a: { maxConcurrentRuns: 1 } }, weights: { acme: 2 } };
    expect(applyPlanePatch(one, { agents: { a: null }, weights: { acme: null } })).toEqual({});
  });

  it('agents and weights patched onto no stored ceiling start from none', () => {
    expect(applyPlanePatch(null, { agents: { a: { maxConcurrentRuns: 1 } }, weights: { acme: 2 } })).toEqual({
      agents: { a: { maxConcurrentRuns: 1 } },
      weights: { acme: 2 },
    });
    expect(applyPlanePatch({ maxConcurrentRuns: 4 }, { weights: { acme: 2 } })).toEqual({ maxConcurrentRuns: 4, weights: { acme: 2 } });
  });

  it('does not change the stored ceiling it patches', () => {
    const stored = { maxConcurrentRuns: 3, agents: { a: { maxConcurrentRuns: 1 } }, weights: { acme: 2 } };
    applyPlanePatch(stored, { maxConcurrentRuns: null, agents: { a: null, c: { maxConcurrentRuns: 4 } }, weights: { acme: null } });
    expect(stored).toEqual({ maxConcurrentRuns: 3, agents: { a: { maxConcurrentRuns: 1 } }, weights: { acme: 2 } });
  });

  it('an agent named __proto__ is patched as an own member', () => {
    const patched = applyPlanePatch(null, JSON.parse('{"agents": {"__proto__": {"maxConcurrentRuns": 2}}}'));
    expect(planeAgentLimit(patched, '__proto__')).toBe(2);
    const kept = applyPlanePatch(patched, { maxConcurrentRuns: 5 });
    expect(planeAgentLimit(kept, '__proto__')).toBe(2);
    expect(planeAgentLimit(applyPlanePatch(patched, { agents: { other: { maxConcurrentRuns: 1 } } }), '__proto__')).toBe(2);
  });

  it.each([[null], [5], ['x'], [[]]])('a patch that is %j is refused as the patch', (patch) => {
    expect(fieldOf(() => applyPlanePatch(current, patch))).toBe('patch');
    expect(fieldOf(() => applyPlanePatch(current, patch, 'body'))).toBe('body');
  });

  it.each([[5], ['x'], [[]]])('agents or weights patched with %j are refused naming the member', (value) => {
    expect(fieldOf(() => applyPlanePatch(current, { agents: value }))).toBe('patch.agents');
    expect(fieldOf(() => applyPlanePatch(current, { weights: value }))).toBe('patch.weights');
  });

  it('validates the merged result, naming fields under the patch', () => {
    expect(fieldOf(() => applyPlanePatch(current, { maxRuns: 1 }))).toBe('patch.maxRuns');
    expect(fieldOf(() => applyPlanePatch(current, { agents: { a: { maxConcurrentRuns: -1 } } }))).toBe('patch.agents["a"].maxConcurrentRuns');
  });
});

describe('a refused plane ceiling or patch says what shape was expected and what it got', () => {
  it.each([
    ['plane: must be an object of plane ceilings { maxConcurrentRuns, agents, weights }, got 5', () => parsePlaneCeiling(5)],
    ['plane.agents: must be an object of agent name → { maxConcurrentRuns }, got "bot"', () => parsePlaneCeiling({ agents: 'bot' })],
    ['plane.agents["bot"]: must be an object of { maxConcurrentRuns }, got 3', () => parsePlaneCeiling({ agents: { bot: 3 } })],
    ['plane.weights: must be an object of tenant → weight (a whole number ≥ 1), got true', () => parsePlaneCeiling({ weights: true })],
    ['patch: must be an object of members that change the plane ceiling (null removes one), got null', () => applyPlanePatch(null, null)],
    ['patch.weights: must be an object of name → value (null removes one), got 2', () => applyPlanePatch(null, { weights: 2 })],
  ])('%s', (message, action) => {
    expect(action).toThrow(message);
  });

  it('an agent member other than maxConcurrentRuns is refused pointing at maxConcurrentRuns', () => {
    expect(() => parsePlaneCeiling({ agents: { bot: { maxTokensPerPeriod: 1 } } })).toThrow(/^plane\.agents\["bot"\]\.maxTokensPerPeriod: .*use maxConcurrentRuns$/);
  });
});
