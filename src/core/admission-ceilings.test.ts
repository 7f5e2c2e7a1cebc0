import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { admissionConcurrencyRefusal, admissionSpendRefusal, unboundedRefusal, type ConcurrencyFigures } from './admission-ceilings.js';
import type { PlaneCeiling } from './plane-ceiling.js';
import { concurrencyRefusal } from './reserve-decision.js';
import type { TenantQuota } from './quota.js';

const figures = (overrides: Partial<ConcurrencyFigures> = {}): ConcurrencyFigures => ({
  slotHeld: false,
  running: 0,
  agentRunning: 0,
  planeRunning: 0,
  planeAgentRunning: 0,
  ...overrides,
});

describe('admissionConcurrencyRefusal (K3, K4, K6, K7)', () => {
  const quota: TenantQuota = { period: 'monthly', maxConcurrentRuns: 4, agents: { bot: { maxConcurrentRuns: 2 } } };
  const plane: PlaneCeiling = { maxConcurrentRuns: 10, agents: { bot: { maxConcurrentRuns: 3 } } };
  const ceilings = { quota, plane, agent: 'bot' };

  it('names each bound when only it binds, with its own count and limit', () => {
    expect(admissionConcurrencyRefusal('acme', ceilings, figures({ agentRunning: 2 }))).toEqual({
      code: 'TooManyRuns', tenant: 'acme', running: 2, limit: 2, bound: 'agent', agent: 'bot',
    });
    expect(admissionConcurrencyRefusal('acme', ceilings, figures({ running: 4 }))).toEqual({
      code: 'TooManyRuns', tenant: 'acme', running: 4, limit: 4, bound: 'tenant',
    });
    expect(admissionConcurrencyRefusal('acme', ceilings, figures({ planeAgentRunning: 3 }))).toEqual({
      code: 'TooManyRuns', tenant: 'acme', running: 3, limit: 3, bound: 'plane-agent', agent: 'bot',
    });
    expect(admissionConcurrencyRefusal('acme', ceilings, figures({ planeRunning: 12 }))).toEqual({
      code: 'TooManyRuns', tenant: 'acme', running: 12, limit: 10, bound: 'plane',
    });
  });

  it('names the narrowest when several bind: agent, tenant, plane-agent, plane', () => {
    const all = figures({ agentRunning: 2, running: 4, planeAgentRunning: 3, planeRunning: 10 });
    expect(admissionConcurrencyRefusal('acme', ceilings, all)?.bound).toBe('agent');
    expect(admissionConcurrencyRefusal('acme', ceilings, { ...all, agentRunning: 0 })?.bound).toBe('tenant');
    expect(admissionConcurrencyRefusal('acme', ceilings, { ...all, agentRunning: 0, running: 0 })?.bound).toBe('plane-agent');
  });

  it('a run without an agent is covered by no per-agent ceiling; a held slot is never refused', () => {
    const agentless = { quota, plane, agent: null };
    expect(admissionConcurrencyRefusal('acme', agentless, figures({ agentRunning: 9, planeAgentRunning: 9 }))).toBeNull();
    expect(admissionConcurrencyRefusal('acme', ceilings, figures({ slotHeld: true, running: 99, planeRunning: 99 }))).toBeNull();
  });

  it('without agent or plane ceilings it answers exactly what concurrencyRefusal answers', () => {
    fc.assert(
      fc.property(fc.option(fc.nat({ max: 20 }), { nil: undefined }), fc.nat({ max: 40 }), fc.boolean(), (limit, running, slotHeld) => {
        const tenantOnly: TenantQuota = limit === undefined ? { period: 'monthly' } : { period: 'monthly', maxConcurrentRuns: limit };
        const decided = admissionConcurrencyRefusal('t', { quota: tenantOnly, plane: null, agent: 'bot' }, figures({ slotHeld, running, planeRunning: 1000 }));
        expect(decided).toEqual(concurrencyRefusal('t', tenantOnly, { slotHeld, running }));
      }),
    );
  });
});

describe('admissionSpendRefusal (K8, K9)', () => {
  const tokens = (n: number) => ({ tokens: n, minorUnits: 0 });
  const quota: TenantQuota = { period: 'daily', maxTokensPerPeriod: 1000, agents: { bot: { maxTokensPerPeriod: 500 } } };
  const base = {
    tenant: 'acme',
    period: '2026-01-05',
    quota,
    agent: 'bot' as string | null,
    tenantFigures: { settled: tokens(100), reserved: tokens(100) },
    agentFigures: { settled: tokens(100), reserved: tokens(100) },
  };

  it("refuses bound 'agent' with the agent's figures when the agent's ceiling binds, an exact fill fits", () => {
    expect(admissionSpendRefusal({ ...base, requested: tokens(300) })).toBeNull();
    expect(admissionSpendRefusal({ ...base, requested: tokens(301) })).toEqual({
      code: 'SpentOut', tenant: 'acme', period: '2026-01-05', unit: 'tokens', settled: 100, reserved: 100, requested: 301, limit: 500,
      bound: 'agent', agent: 'bot',
    });
  });

  it("refuses bound 'tenant' when only the tenant's binds, and ignores agent figures for an agentless run", () => {
    const busy = { ...base, tenantFigures: { settled: tokens(700), reserved: tokens(200) } };
    expect(admissionSpendRefusal({ ...busy, requested: tokens(200) })).toMatchObject({ bound: 'tenant', limit: 1000, settled: 700 });
    expect(admissionSpendRefusal({ ...base, agent: null, agentFigures: null, requested: tokens(800) })).toBeNull();
  });
});

describe('unboundedRefusal', () => {
  const quota = { period: 'monthly', maxMinorUnitsPerPeriod: 10, agents: { bot: { maxTokensPerPeriod: 100 } } } as const;
  it('names the tenant when its own quota bounds the unit, and the agent when only the agent ceiling does', () => {
    expect(unboundedRefusal('acme', quota, 'bot', 'minor units', 'maxMinorUnits')).toEqual({
      code: 'Unbounded', tenant: 'acme', unit: 'minor units', field: 'maxMinorUnits', bound: 'tenant',
    });
    expect(unboundedRefusal('acme', quota, 'bot', 'tokens', 'maxTokens')).toEqual({
      code: 'Unbounded', tenant: 'acme', unit: 'tokens', field: 'maxTokens', bound: 'agent', agent: 'bot',
    });
    expect(unboundedRefusal('acme', { period: 'monthly', maxTokensPerPeriod: 5 }, null, 'tokens', 'maxCallTokens')).toMatchObject({ bound: 'tenant' });
  });
});

describe('admissionConcurrencyRefusal: each ceiling admits up to its limit', () => {
  const quota: TenantQuota = { period: 'monthly', maxConcurrentRuns: 4, agents: { bot: { maxConcurrentRuns: 2 } } };
  const plane: PlaneCeiling = { maxConcurrentRuns: 10, agents: { bot: { maxConcurrentRuns: 3 } } };
  const ceilings = { quota, plane, agent: 'bot' };

  it('one below every limit is admitted; reaching any one is refused', () => {
    const below = figures({ agentRunning: 1, running: 3, planeAgentRunning: 2, planeRunning: 9 });
    expect(admissionConcurrencyRefusal('acme', ceilings, below)).toBeNull();
    expect(admissionConcurrencyRefusal('acme', ceilings, { ...below, agentRunning: 2 })?.bound).toBe('agent');
    expect(admissionConcurrencyRefusal('acme', ceilings, { ...below, running: 4 })?.bound).toBe('tenant');
    expect(admissionConcurrencyRefusal('acme', ceilings, { ...below, planeAgentRunning: 3 })?.bound).toBe('plane-agent');
    expect(admissionConcurrencyRefusal('acme', ceilings, { ...below, planeRunning: 10 })?.bound).toBe('plane');
  });

  it('a ceiling of 0 refuses the first run under it', () => {
    const zero = (q: TenantQuota, p: PlaneCeiling | null) => admissionConcurrencyRefusal('acme', { quota: q, plane: p, agent: 'bot' }, figures());
    expect(zero({ period: 'monthly', agents: { bot: { maxConcurrentRuns: 0 } } }, null)).toEqual({
      code: 'TooManyRuns', tenant: 'acme', running: 0, limit: 0, bound: 'agent', agent: 'bot',
    });
    expect(zero({ period: 'monthly' }, { agents: { bot: { maxConcurrentRuns: 0 } } })).toEqual({
      code: 'TooManyRuns', tenant: 'acme', running: 0, limit: 0, bound: 'plane-agent', agent: 'bot',
    });
    expect(zero({ period: 'monthly' }, { maxConcurrentRuns: 0 })).toEqual({ code: 'TooManyRuns', tenant: 'acme', running: 0, limit: 0, bound: 'plane' });
  });

  it("an agent's figures count only under its own ceilings: another agent's run is not refused by them", () => {
    const other = { quota, plane, agent: 'other' };
    expect(admissionConcurrencyRefusal('acme', other, figures({ agentRunning: 5, planeAgentRunning: 5 }))).toBeNull();
  });

  it('a plane without a plane-wide maximum does not bound every tenant together', () => {
    const agentsOnly = { quota: { period: 'monthly' } as TenantQuota, plane: { agents: { bot: { maxConcurrentRuns: 3 } } }, agent: null };
    expect(admissionConcurrencyRefusal('acme', agentsOnly, figures({ planeRunning: 1000 }))).toBeNull();
  });

  it('a run that already holds its slot is not refused by the agent or plane-agent ceilings either', () => {
    expect(admissionConcurrencyRefusal('acme', ceilings, figures({ slotHeld: true, agentRunning: 9, planeAgentRunning: 9 }))).toBeNull();
  });
});

describe('admissionSpendRefusal: agent ceilings in each unit (K8)', () => {
  const spend = (tokens: number, minorUnits: number) => ({ tokens, minorUnits });
  const input = (quota: TenantQuota, requested: { tokens: number; minorUnits: number }) => ({
    tenant: 'acme',
    period: '2026-08',
    quota,
    agent: 'bot' as string | null,
    tenantFigures: { settled: spend(0, 0), reserved: spend(0, 0) },
    agentFigures: { settled: spend(10, 20), reserved: spend(5, 10) },
    requested,
  });

  it("an agent's minor-unit ceiling refuses with the agent's minor-unit figures; an exact fill fits", () => {
    const quota: TenantQuota = { period: 'monthly', agents: { bot: { maxMinorUnitsPerPeriod: 100 } } };
    expect(admissionSpendRefusal(input(quota, spend(1000, 70)))).toBeNull();
    expect(admissionSpendRefusal(input(quota, spend(0, 71)))).toEqual({
      code: 'SpentOut', tenant: 'acme', period: '2026-08', unit: 'minor units', settled: 20, reserved: 10, requested: 71, limit: 100,
      bound: 'agent', agent: 'bot',
    });
  });

  it('an agent without spend ceilings leaves the decision to the tenant’s', () => {
    const quota: TenantQuota = { period: 'monthly', maxTokensPerPeriod: 100, agents: { bot: { maxConcurrentRuns: 1 } } };
    expect(admissionSpendRefusal(input(quota, spend(100, 0)))).toBeNull();
    expect(admissionSpendRefusal(input(quota, spend(101, 0)))).toEqual({
      code: 'SpentOut', tenant: 'acme', period: '2026-08', unit: 'tokens', settled: 0, reserved: 0, requested: 101, limit: 100, bound: 'tenant',
    });
  });

  it('an agent whose ceilings bound no spend comes without figures (null), and the tenant decides', () => {
    const quota: TenantQuota = { period: 'monthly', maxTokensPerPeriod: 100, agents: { bot: { maxConcurrentRuns: 1 } } };
    expect(admissionSpendRefusal({ ...input(quota, spend(100, 0)), agentFigures: null })).toBeNull();
    expect(admissionSpendRefusal({ ...input(quota, spend(101, 0)), agentFigures: null })).toMatchObject({ bound: 'tenant', limit: 100, requested: 101 });
  });

  it("a run of another agent is not held to this agent's ceiling", () => {
    const quota: TenantQuota = { period: 'monthly', agents: { bot: { maxTokensPerPeriod: 1 } } };
    expect(admissionSpendRefusal({ ...input(quota, spend(50, 0)), agent: 'other' })).toBeNull();
  });

  it("when both fit the agent's ceiling first, the tenant's still binds with the tenant's figures", () => {
    const quota: TenantQuota = { period: 'monthly', maxTokensPerPeriod: 1000, agents: { bot: { maxTokensPerPeriod: 500 } } };
    const busy = { ...input(quota, spend(400, 0)), tenantFigures: { settled: spend(500, 0), reserved: spend(200, 0) } };
    expect(admissionSpendRefusal(busy)).toEqual({
      code: 'SpentOut', tenant: 'acme', period: '2026-08', unit: 'tokens', settled: 500, reserved: 200, requested: 400, limit: 1000, bound: 'tenant',
    });
  });
});

describe('unboundedRefusal: whose ceiling bounds the unit (K8)', () => {
  it("names the tenant when its own quota bounds minor units, though the run's agent bounds them too", () => {
    const quota: TenantQuota = { period: 'monthly', maxMinorUnitsPerPeriod: 10, agents: { bot: { maxMinorUnitsPerPeriod: 5 } } };
    expect(unboundedRefusal('acme', quota, 'bot', 'minor units', 'maxCallMinorUnits')).toEqual({
      code: 'Unbounded', tenant: 'acme', unit: 'minor units', field: 'maxCallMinorUnits', bound: 'tenant',
    });
  });

  it("names the agent when only the agent's ceiling bounds minor units, though the tenant bounds tokens", () => {
    const quota: TenantQuota = { period: 'monthly', maxTokensPerPeriod: 10, agents: { bot: { maxMinorUnitsPerPeriod: 5 } } };
    expect(unboundedRefusal('acme', quota, 'bot', 'minor units', 'maxMinorUnits')).toEqual({
      code: 'Unbounded', tenant: 'acme', unit: 'minor units', field: 'maxMinorUnits', bound: 'agent', agent: 'bot',
    });
  });

  it("names the tenant for tokens it bounds itself, though the run's agent bounds them too", () => {
    const quota: TenantQuota = { period: 'monthly', maxTokensPerPeriod: 10, agents: { bot: { maxTokensPerPeriod: 5 } } };
    expect(unboundedRefusal('acme', quota, 'bot', 'tokens', 'maxTokens')).toEqual({
      code: 'Unbounded', tenant: 'acme', unit: 'tokens', field: 'maxTokens', bound: 'tenant',
    });
  });

  it('a run without an agent is always refused under the tenant', () => {
    expect(unboundedRefusal('acme', { period: 'monthly' }, null, 'tokens', 'maxTokens')).toEqual({
      code: 'Unbounded', tenant: 'acme', unit: 'tokens', field: 'maxTokens', bound: 'tenant',
    });
  });
});
