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

describe('admissionConcurrencyRefusal (issue 12)', () => {
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

describe('admissionSpendRefusal (issue 12)', () => {
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
