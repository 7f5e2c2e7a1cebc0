import { describe, expect, it } from 'vitest';
import { type Refusal, refusalMessage, refuse } from './refusal.js';

const DIGEST = '0f'.repeat(32);
const OPS = { actor: 'ops-carol', basis: 'authenticated' } as const;

describe('refusal messages', () => {
  it('TooManyRuns names the tenant, the running count and the limit, and says it is back-pressure', () => {
    const message = refusalMessage({ code: 'TooManyRuns', tenant: 'acme', running: 4, limit: 4, bound: 'tenant' });
    expect(message).toContain("tenant 'acme'");
    expect(message).toContain('4 run(s) executing');
    expect(message).toContain('limit is 4');
    expect(message).toContain('back-pressure, not a fault');
    expect(message).toContain('retry when one of them finishes');
  });

  it('SpentOut gives settled and reserved separately with units, the limit, the period and the request', () => {
    const message = refusalMessage({
      code: 'SpentOut',
      tenant: 'acme',
      period: '2026-08',
      unit: 'minor units',
      settled: 600,
      reserved: 300,
      requested: 101,
      bound: 'tenant',
      limit: 1000,
    });
    expect(message).toContain("tenant 'acme'");
    expect(message).toContain('2026-08');
    expect(message).toContain('reserve 101 minor units');
    expect(message).toContain('600 minor units settled');
    expect(message).toContain('300 minor units reserved');
    expect(message).toContain('limit of 1000 minor units');
    expect(message).toContain('settled spend resets when the period ends');
    expect(message).toContain('reserved spend is released as its runs conclude');
    expect(message).toContain("'quotaplane attention'");
  });

  it('Unbounded says the tenant bounds the unit, the run declares no field, and its cost cannot be reserved', () => {
    const message = refusalMessage({ code: 'Unbounded', tenant: 'acme', unit: 'tokens', field: 'maxCallTokens', bound: 'tenant' });
    expect(message).toContain("tenant 'acme' bounds tokens per period");
    expect(message).toContain('declares no maxCallTokens');
    expect(message).toContain('unbounded and cannot be reserved');
    expect(message).toContain('budget.maxCallTokens');
  });

  it('Unbounded under an agent ceiling names the agent whose ceiling bounds the unit, not the tenant', () => {
    const message = refusalMessage({ code: 'Unbounded', tenant: 'acme', unit: 'tokens', field: 'maxTokens', bound: 'agent', agent: 'refund-bot' });
    expect(message).toMatch(/^tenant 'acme' bounds the tokens per period of agent 'refund-bot', but this run declares no maxTokens/);
  });

  it.each([
    ['tenant', 'the whole tenant'],
    ['agent:refunder', "agent 'refunder'"],
    [`revision:${DIGEST}`, `manifest revision ${DIGEST}`],
    ['subject:user:alice', "everything acting for 'user:alice'"],
  ])('Halted on %s reads "<scope display> is halted by an operator (tenant \'<t>\'): <reason>"', (scope, display) => {
    const message = refusalMessage({
      code: 'Halted',
      tenant: 'acme',
      scope,
      reason: 'incident 42: payments double-charging',
      by: OPS,
      haltedAtMs: 1_700_000_000_000,
    });
    expect(message).toBe(`${display} is halted by an operator (tenant 'acme'): incident 42: payments double-charging`);
  });

  it('Halted with a scope key that does not parse still names the key as stored', () => {
    const message = refusalMessage({ code: 'Halted', tenant: 'acme', scope: 'team:x', reason: 'r', by: OPS, haltedAtMs: 0 });
    expect(message).toBe("team:x is halted by an operator (tenant 'acme'): r");
  });

  it('RateLimited names the grant, the ceiling in words, the tenant, the count in the window, and says wait', () => {
    const message = refusalMessage({
      code: 'RateLimited',
      tenant: 'acme',
      grant: 'tool://payments/refund',
      ceiling: { count: 2, windowSeconds: 3600 },
      reached: 2,
      retryAtMs: 1_700_003_600_000,
    });
    expect(message).toContain('tool://payments/refund');
    expect(message).toContain('at most 2 per 3600 seconds');
    expect(message).toContain("tenant 'acme'");
    expect(message).toContain('2 dispatch(es) already fall in the window');
    expect(message).toContain('back-pressure');
    expect(message).toContain('wait for the window to pass');
  });

  it('UncountableRate names the grant and the countable window range', () => {
    const message = refusalMessage({ code: 'UncountableRate', grant: 'tool://a/b', ceiling: { count: 1, windowSeconds: 0 } });
    expect(message).toContain('tool://a/b');
    expect(message).toContain('no store can count');
    expect(message).toContain('at most 1 per 0 seconds');
    expect(message).toContain('at least 1 second and at most 2678400 seconds');
  });

  it('Withheld names the tenant, the withdrawn subject and the reason, and says to pause', () => {
    const message = refusalMessage({ code: 'Withheld', tenant: 'acme', subject: 'user:alice', reason: 'laptop lost' });
    expect(message).toContain("tenant 'acme'");
    expect(message).toContain("'user:alice'");
    expect(message).toContain('laptop lost');
    expect(message).toContain('pause the run');
  });
});

describe('refuse', () => {
  it('wraps a refusal as { ok: false, refusal, message }', () => {
    const refusal: Refusal = { code: 'TooManyRuns', tenant: 'acme', running: 0, limit: 0, bound: 'tenant' };
    expect(refuse(refusal)).toEqual({ ok: false, refusal, message: refusalMessage(refusal) });
  });
});

describe('TooManyRuns names the ceiling that bound it (K3, K6, K7)', () => {
  const base = { code: 'TooManyRuns', tenant: 'acme', running: 3, limit: 3 } as const;

  it("bound 'agent': the agent's runs in the tenant against the tenant's limit for it", () => {
    const message = refusalMessage({ ...base, bound: 'agent', agent: 'refund-bot' });
    expect(message).toMatch(/^agent 'refund-bot' of tenant 'acme' has 3 run\(s\) executing, and the tenant limits it to 3 concurrent run\(s\); /);
    expect(message).toContain('back-pressure, not a fault');
  });

  it("bound 'plane-agent': the agent's runs across all tenants against the plane-wide limit for it, and who asked", () => {
    const message = refusalMessage({ ...base, running: 5, limit: 4, bound: 'plane-agent', agent: 'refund-bot' });
    expect(message).toMatch(/^agent 'refund-bot' has 5 run\(s\) executing across all tenants, and the plane-wide limit for it is 4 concurrent run\(s\) \(tenant 'acme' asked\); /);
  });

  it("bound 'plane': every tenant's runs against the plane-wide limit, and who asked", () => {
    const message = refusalMessage({ ...base, running: 50, limit: 50, bound: 'plane' });
    expect(message).toMatch(/^all tenants together have 50 run\(s\) executing, and the plane-wide limit is 50 concurrent run\(s\) \(tenant 'acme' asked\); /);
  });

  it("bound 'tenant': the tenant's runs against its own limit, naming no agent and no plane", () => {
    const message = refusalMessage({ ...base, running: 4, limit: 2, bound: 'tenant' });
    expect(message).toMatch(/^tenant 'acme' has 4 run\(s\) executing, and its limit is 2 concurrent run\(s\); /);
    expect(message).not.toContain('plane-wide');
    expect(message).not.toContain('agent');
  });

  it('an admission that waited and ran out of time says how long it waited and its place in the queue', () => {
    const waited = refusalMessage({ ...base, bound: 'plane', waitedMs: 1500, queuePosition: 2 });
    expect(waited).toMatch(/retry when one of them finishes \(waited 1500 ms, position 2 in the tenant's queue\)$/);
    expect(refusalMessage({ ...base, bound: 'plane', waitedMs: 0 })).toMatch(/\(waited 0 ms, position 1 in the tenant's queue\)$/);
  });

  it('an admission that did not wait says nothing about waiting', () => {
    expect(refusalMessage({ ...base, bound: 'tenant' })).toMatch(/retry when one of them finishes$/);
    expect(refusalMessage({ ...base, bound: 'tenant', queuePosition: 3 })).not.toContain('waited');
  });
});

describe('SpentOut and Unbounded name whose ceiling bound the unit (K8)', () => {
  const spentOut = {
    code: 'SpentOut', tenant: 'acme', period: '2026-08', unit: 'tokens', settled: 400, reserved: 100, requested: 1, limit: 500,
  } as const;

  it("bound 'agent' names the agent and says the figures are under its own ceiling", () => {
    const message = refusalMessage({ ...spentOut, bound: 'agent', agent: 'refund-bot' });
    expect(message).toMatch(/^tenant 'acme' \(agent 'refund-bot', under its own ceiling\) cannot reserve 1 tokens in period 2026-08: /);
    expect(message).toContain('400 tokens settled and 100 tokens reserved by running work, against a limit of 500 tokens');
  });

  it("bound 'tenant' names no agent", () => {
    const message = refusalMessage({ ...spentOut, bound: 'tenant' });
    expect(message).toMatch(/^tenant 'acme' cannot reserve 1 tokens in period 2026-08: /);
    expect(message).not.toContain('agent');
  });

  it("Unbounded with bound 'tenant' names no agent, even when one is given", () => {
    const message = refusalMessage({ code: 'Unbounded', tenant: 'acme', unit: 'minor units', field: 'maxMinorUnits', bound: 'tenant', agent: 'refund-bot' });
    expect(message).toMatch(/^tenant 'acme' bounds minor units per period, but this run declares no maxMinorUnits, /);
    expect(message).toContain('(a run under a minor units ceiling declares both its total and its per-call bound)');
    expect(message).not.toContain('refund-bot');
  });
});

describe('an agent-bound refusal that lacks its agent name never prints "undefined"', () => {
  it.each([
    [{ code: 'TooManyRuns', tenant: 'acme', running: 1, limit: 1, bound: 'agent' } as Refusal, "agent '' of tenant 'acme'"],
    [{ code: 'TooManyRuns', tenant: 'acme', running: 1, limit: 1, bound: 'plane-agent' } as Refusal, "agent '' has 1 run(s)"],
    [{ code: 'SpentOut', tenant: 'acme', period: '2026-08', unit: 'tokens', settled: 0, reserved: 0, requested: 1, limit: 0, bound: 'agent' } as Refusal, "(agent '', under its own ceiling)"],
    [{ code: 'Unbounded', tenant: 'acme', unit: 'tokens', field: 'maxTokens', bound: 'agent' } as Refusal, "per period of agent '', but"],
  ])('%#: %o', (refusal, fragment) => {
    const message = refusalMessage(refusal);
    expect(message).toContain(fragment);
    expect(message).not.toContain('undefined');
  });
});
