import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { PlaneCeiling } from '../../src/core/plane-ceiling.js';
import type { TenantQuota } from '../../src/core/quota.js';
import { openStore } from '../../src/store/open-store.js';
import type { RaceReport } from './sqlite-race-worker.js';
import { raceProcesses } from './race-harness.js';

// Exactness across processes on one SQLite file: the plane-wide ceiling, the plane-wide
// ceiling per agent and a tenant's per-agent ceilings, raced by real OS processes released together
// from a barrier, each with its own connection and its admissions sent at once (group commit).
const BY = { actor: 'ops', basis: 'asserted' as const };
const audit = (action: string) => ({ atMs: 1, by: BY, action, subject: action, detail: {} });

function answersOf(reports: readonly RaceReport[]) {
  return reports.flatMap((report) => report.answers);
}

function runsOf(prefix: string, count: number): string[] {
  return Array.from({ length: count }, (_, index) => `${prefix}-${String(index).padStart(2, '0')}`);
}

describe('SQLite plane-wide and per-agent ceilings raced by several OS processes', () => {
  let dir: string;
  let url: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-ceiling-race-'));
    url = `sqlite:${join(dir, 'race.db')}`;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function prepare(plane: PlaneCeiling | null, quotas: Record<string, TenantQuota>): Promise<void> {
    const store = await openStore(url);
    if (plane !== null) await store.setPlaneCeiling?.(plane, audit('plane.set'), 'quotaplane:plane');
    for (const [tenant, quota] of Object.entries(quotas)) await store.tenant(tenant).setQuota(quota, audit('quota.set'));
    await store.close();
  }

  it('K11-sqlite 48 admissions of 4 tenants in 4 processes under a plane-wide ceiling of 6 admit exactly 6', async () => {
    await prepare({ maxConcurrentRuns: 6 }, {});
    const tenants = ['acme', 'globex', 'initech', 'umbrella'];
    const reports = await raceProcesses(
      tenants.map((tenant) => ({ scenario: 'admit' as const, url, tenant, runs: runsOf(tenant, 12), concurrent: true })),
    );
    const answers = answersOf(reports);
    expect(answers).toHaveLength(48);
    expect(answers.filter((a) => a.answer === 'ok')).toHaveLength(6);
    for (const refused of answers.filter((a) => a.answer !== 'ok')) expect(refused).toMatchObject({ answer: 'TooManyRuns', bound: 'plane', figure: 6 });
    const store = await openStore(url);
    expect(await store.planeUsage?.([])).toEqual({ running: 6, agents: {} });
    let running = 0;
    for (const tenant of tenants) running += await store.tenant(tenant).running();
    expect(running).toBe(6);
    await store.close();
  });

  it('K12-sqlite 40 admissions of one agent in 4 processes at its tenant ceiling of 5 admit exactly 5', async () => {
    await prepare(null, { acme: { period: 'monthly', agents: { 'refund-bot': { maxConcurrentRuns: 5 } } } });
    const reports = await raceProcesses(
      [0, 1, 2, 3].map((index) => ({
        scenario: 'admit' as const,
        url,
        tenant: 'acme',
        runs: runsOf(`p${index}`, 10),
        concurrent: true,
        agent: 'refund-bot',
      })),
    );
    const answers = answersOf(reports);
    expect(answers.filter((a) => a.answer === 'ok')).toHaveLength(5);
    for (const refused of answers.filter((a) => a.answer !== 'ok')) expect(refused).toMatchObject({ answer: 'TooManyRuns', bound: 'agent', figure: 5 });
    const store = await openStore(url);
    expect((await store.tenant('acme').agentUsage?.(['refund-bot'], '2025-10'))?.[0]?.running).toBe(5);
    await store.close();
  });

  it('K13-sqlite 20 admissions of one agent holding 100 tokens each, in 4 processes, against its 1000-token ceiling admit exactly 10', async () => {
    await prepare(null, { acme: { period: 'monthly', agents: { 'refund-bot': { maxTokensPerPeriod: 1000 } } } });
    const reports = await raceProcesses(
      [0, 1, 2, 3].map((index) => ({
        scenario: 'admit' as const,
        url,
        tenant: 'acme',
        runs: runsOf(`s${index}`, 5),
        concurrent: true,
        agent: 'refund-bot',
        budget: { maxTokens: 100, maxCallTokens: 0 },
      })),
    );
    const answers = answersOf(reports);
    expect(answers.filter((a) => a.answer === 'ok')).toHaveLength(10);
    for (const refused of answers.filter((a) => a.answer !== 'ok')) expect(refused).toMatchObject({ answer: 'SpentOut', bound: 'agent' });
    const store = await openStore(url);
    const [usage] = (await store.tenant('acme').agentUsage?.(['refund-bot'], '2025-10')) ?? [];
    expect(usage?.reserved).toEqual({ tokens: 1000, minorUnits: 0 });
    expect(await store.tenant('acme').reserved('2025-10')).toEqual({ tokens: 1000, minorUnits: 0 });
    await store.close();
  });

  it('K14-sqlite 40 admissions of one agent in 4 tenants and processes under a plane-wide ceiling of 4 for it admit exactly 4', async () => {
    await prepare({ agents: { crawler: { maxConcurrentRuns: 4 } } }, {});
    const tenants = ['acme', 'globex', 'initech', 'umbrella'];
    const reports = await raceProcesses(
      tenants.map((tenant) => ({ scenario: 'admit' as const, url, tenant, runs: runsOf(tenant, 10), concurrent: true, agent: 'crawler' })),
    );
    const answers = answersOf(reports);
    expect(answers.filter((a) => a.answer === 'ok')).toHaveLength(4);
    for (const refused of answers.filter((a) => a.answer !== 'ok')) {
      expect(refused).toMatchObject({ answer: 'TooManyRuns', bound: 'plane-agent', figure: 4 });
    }
    const store = await openStore(url);
    expect((await store.planeUsage?.(['crawler']))?.agents).toEqual({ crawler: 4 });
    await store.close();
  });
});
