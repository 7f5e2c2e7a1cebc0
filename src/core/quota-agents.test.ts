import { describe, expect, it } from 'vitest';

import { agentCeilingsOf, boundsSpend, holdQuotaFor, parseAgentCeilings, parseQuota, parseRateCeilings, parseStoredQuota, type TenantQuota } from './quota.js';
import { invalidFieldOf as fieldOf } from '../../test/invalid-argument.js';

// Per-agent ceilings inside a tenant's quota (docs/design/rules.md#k7–#k9): how they are parsed, looked up and
// folded into the quota the hold formula uses.

describe('agentCeilingsOf', () => {
  const quota: TenantQuota = { period: 'monthly', maxConcurrentRuns: 9, agents: { bot: { maxConcurrentRuns: 2 }, idle: {} } };

  it("answers the agent's own ceilings", () => {
    expect(agentCeilingsOf(quota, 'bot')).toEqual({ maxConcurrentRuns: 2 });
    expect(agentCeilingsOf(quota, 'idle')).toEqual({});
  });

  it('a run without an agent, an agent not listed, or a quota without agents has none (null)', () => {
    expect(agentCeilingsOf(quota, null)).toBeNull();
    expect(agentCeilingsOf(quota, undefined)).toBeNull();
    expect(agentCeilingsOf(quota, 'other')).toBeNull();
    expect(agentCeilingsOf({ period: 'monthly', maxConcurrentRuns: 9 }, 'bot')).toBeNull();
  });

  it("a run without an agent is not covered by agents literally named 'null' or 'undefined'", () => {
    const named: TenantQuota = { period: 'monthly', agents: { null: { maxConcurrentRuns: 1 }, undefined: { maxConcurrentRuns: 2 } } };
    expect(agentCeilingsOf(named, 'null')).toEqual({ maxConcurrentRuns: 1 });
    expect(agentCeilingsOf(named, null)).toBeNull();
    expect(agentCeilingsOf(named, undefined)).toBeNull();
  });

  it('reads own members only: an agent named like an Object.prototype member is not listed', () => {
    expect(agentCeilingsOf(quota, 'toString')).toBeNull();
    expect(agentCeilingsOf(quota, 'constructor')).toBeNull();
    const proto = parseQuota(JSON.parse('{"agents": {"__proto__": {"maxTokensPerPeriod": 3}}}'));
    expect(agentCeilingsOf(proto, '__proto__')).toEqual({ maxTokensPerPeriod: 3 });
  });
});

describe('holdQuotaFor: a unit is held when the tenant or the run’s agent bounds it (K8)', () => {
  it('an agent-only token ceiling bounds tokens in the hold quota and leaves minor units unbounded', () => {
    const quota = parseQuota({ maxConcurrentRuns: 3, agents: { bot: { maxTokensPerPeriod: 100 } } });
    const held = holdQuotaFor(quota, 'bot');
    expect(held).toEqual({ period: 'monthly', maxConcurrentRuns: 3, maxTokensPerPeriod: 100, agents: { bot: { maxTokensPerPeriod: 100 } } });
    expect(Object.hasOwn(held, 'maxMinorUnitsPerPeriod')).toBe(false);
  });

  it('an agent-only minor-unit ceiling bounds minor units and leaves tokens unbounded', () => {
    const quota = parseQuota({ period: 'daily', agents: { bot: { maxMinorUnitsPerPeriod: 50 } } });
    const held = holdQuotaFor(quota, 'bot');
    expect(held).toEqual({ period: 'daily', maxMinorUnitsPerPeriod: 50, agents: { bot: { maxMinorUnitsPerPeriod: 50 } } });
    expect(Object.hasOwn(held, 'maxTokensPerPeriod')).toBe(false);
    expect(boundsSpend(held)).toBe(true);
  });

  it("the tenant's own spend ceilings are kept over the agent's, in both units", () => {
    const quota = parseQuota({ maxTokensPerPeriod: 1000, maxMinorUnitsPerPeriod: 500, agents: { bot: { maxTokensPerPeriod: 10, maxMinorUnitsPerPeriod: 5 } } });
    expect(holdQuotaFor(quota, 'bot')).toEqual({
      period: 'monthly',
      maxTokensPerPeriod: 1000,
      maxMinorUnitsPerPeriod: 500,
      agents: { bot: { maxTokensPerPeriod: 10, maxMinorUnitsPerPeriod: 5 } },
    });
  });

  it('a tenant ceiling of 0 is a ceiling, kept over the agent’s', () => {
    const quota = parseQuota({ maxTokensPerPeriod: 0, agents: { bot: { maxTokensPerPeriod: 10 } } });
    expect(holdQuotaFor(quota, 'bot').maxTokensPerPeriod).toBe(0);
  });

  it('an agent with only a concurrency ceiling adds no spend bound', () => {
    const quota = parseQuota({ agents: { bot: { maxConcurrentRuns: 1 } } });
    const held = holdQuotaFor(quota, 'bot');
    expect(boundsSpend(held)).toBe(false);
    expect(Object.keys(held).sort()).toEqual(['agents', 'period']);
  });

  it('does not change the quota it is given', () => {
    const quota = parseQuota({ agents: { bot: { maxTokensPerPeriod: 100 } } });
    holdQuotaFor(quota, 'bot');
    expect(quota).toEqual({ period: 'monthly', agents: { bot: { maxTokensPerPeriod: 100 } } });
    expect(Object.hasOwn(quota, 'maxTokensPerPeriod')).toBe(false);
  });
});

describe('parseQuota: agents', () => {
  it('agents: null is no agent ceilings', () => {
    expect(Object.keys(parseQuota({ agents: null }))).toEqual(['period']);
  });

  it('keeps an agent listed without ceilings, and a ceiling of 0', () => {
    expect(parseQuota({ agents: { idle: {} } })).toEqual({ period: 'monthly', agents: { idle: {} } });
    expect(parseQuota({ agents: { bot: { maxConcurrentRuns: 0, maxTokensPerPeriod: 0, maxMinorUnitsPerPeriod: 0 } } }).agents).toEqual({
      bot: { maxConcurrentRuns: 0, maxTokensPerPeriod: 0, maxMinorUnitsPerPeriod: 0 },
    });
  });

  it('leaves a null or absent agent ceiling out, not present as undefined', () => {
    const agents = parseQuota({ agents: { bot: { maxConcurrentRuns: null, maxTokensPerPeriod: undefined, maxMinorUnitsPerPeriod: 4 } } }).agents;
    expect(Object.keys(agents?.bot ?? {})).toEqual(['maxMinorUnitsPerPeriod']);
  });

  it('keeps each agent under its own key, a stored quota too', () => {
    const value = { agents: { a: { maxConcurrentRuns: 1 }, b: { maxTokensPerPeriod: 2 } } };
    expect(parseQuota(value).agents).toEqual({ a: { maxConcurrentRuns: 1 }, b: { maxTokensPerPeriod: 2 } });
    expect(parseStoredQuota(value).agents).toEqual({ a: { maxConcurrentRuns: 1 }, b: { maxTokensPerPeriod: 2 } });
  });

  it.each([[5], ['bot'], [true]])('agents given as %j are refused as quota.agents', (agents) => {
    expect(fieldOf(() => parseQuota({ agents }))).toBe('quota.agents');
  });

  it.each([[3], [null], ['x'], [[]], [true]])("an agent's ceilings given as %j are refused naming the agent", (ceilings) => {
    expect(fieldOf(() => parseQuota({ agents: { bot: ceilings } }))).toBe('quota.agents["bot"]');
  });

  it('an agent name that is not an identifier is refused as the key', () => {
    expect(fieldOf(() => parseQuota({ agents: { '': { maxConcurrentRuns: 1 } } }))).toBe('quota.agents key');
    expect(fieldOf(() => parseQuota({ agents: { ' bot': { maxConcurrentRuns: 1 } } }))).toBe('quota.agents key');
  });

  it('every agent ceiling is checked as an amount, naming it', () => {
    for (const name of ['maxConcurrentRuns', 'maxTokensPerPeriod', 'maxMinorUnitsPerPeriod']) {
      expect(fieldOf(() => parseQuota({ agents: { bot: { [name]: -1 } } }))).toBe(`quota.agents["bot"].${name}`);
      expect(fieldOf(() => parseQuota({ agents: { bot: { [name]: 1.5 } } }))).toBe(`quota.agents["bot"].${name}`);
    }
  });

  it('an unknown agent member is refused with the members that exist', () => {
    expect(fieldOf(() => parseQuota({ agents: { bot: { period: 'daily' } } }))).toBe('quota.agents["bot"].period');
    expect(() => parseQuota({ agents: { bot: { period: 'daily' } } })).toThrow(
      /^quota\.agents\["bot"\]\.period: .*maxConcurrentRuns, maxTokensPerPeriod, maxMinorUnitsPerPeriod, alertThresholds$/,
    );
  });

  it('names agent fields under the root it was given', () => {
    expect(fieldOf(() => parseQuota({ agents: { bot: { maxConcurrentRuns: -1 } } }, 'body'))).toBe('body.agents["bot"].maxConcurrentRuns');
  });
});

describe('parseAgentCeilings on its own', () => {
  it('names the map `agents` unless told otherwise', () => {
    expect(fieldOf(() => parseAgentCeilings(5))).toBe('agents');
    expect(fieldOf(() => parseAgentCeilings(null))).toBe('agents');
    expect(fieldOf(() => parseAgentCeilings([]))).toBe('agents');
    expect(fieldOf(() => parseAgentCeilings({ bot: 1 }))).toBe('agents["bot"]');
    expect(fieldOf(() => parseAgentCeilings({ '': {} }))).toBe('agents key');
    expect(fieldOf(() => parseAgentCeilings(5, 'flags'))).toBe('flags');
  });

  it('an agent named __proto__ is an ordinary own member: enumerable, writable and deletable', () => {
    const agents = parseAgentCeilings(JSON.parse('{"__proto__": {"maxConcurrentRuns": 1}}'));
    expect(Object.getOwnPropertyDescriptor(agents, '__proto__')).toEqual({
      value: { maxConcurrentRuns: 1 }, enumerable: true, writable: true, configurable: true,
    });
  });

  it('answers an empty map for {}', () => {
    expect(parseAgentCeilings({})).toEqual({});
  });
});

describe('a refused agent map or rate ceiling says what was expected', () => {
  it('agents that are not a map, and ceilings that are not an object, say what they should be and what they got', () => {
    expect(() => parseQuota({ agents: 5 })).toThrow(
      'quota.agents: must be an object of agent name → { maxConcurrentRuns, maxTokensPerPeriod, maxMinorUnitsPerPeriod }, got 5',
    );
    expect(() => parseQuota({ agents: { bot: 'x' } })).toThrow('quota.agents["bot"]: must be an object of ceilings, got "x"');
  });

  it('rate ceilings that are not a map or a list, and a count of 0, say what they should be', () => {
    expect(() => parseQuota({ rateCeilings: 5 })).toThrow('quota.rateCeilings: must be an object of grant → ceilings, got 5');
    expect(() => parseRateCeilings(5)).toThrow('ceilings: must be an array of { count, windowSeconds }');
    expect(() => parseQuota({ rateCeilings: { search: [{ count: 0, windowSeconds: 60 }] } })).toThrow(
      /^quota\.rateCeilings\["search"\]\[0\]\.count: must be at least 1/,
    );
  });
});
