import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PlaneCeiling } from '../../src/core/plane-ceiling.js';
import type { TenantQuota } from '../../src/core/quota.js';
import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';
import { RaceCluster } from './race-cluster.js';
import type { RaceOp, RaceResult } from './race-protocol.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';

// Exactness across instances on a real server: four OS processes, each with its own
// store, pool (4 connections) and batcher, fire at the same moment against the plane-wide ceiling,
// the plane-wide ceiling per agent and a tenant's per-agent ceilings. Each race is repeated.

const REPETITIONS = 8;
const WORKERS = 4;
const T_MS = 1_760_000_000_000;
const BY = { actor: 'race-test', basis: 'asserted' } as const;

let url: string;
let schema: string;
let store: PostgresQuotaStore;
let cluster: RaceCluster;

beforeAll(async () => {
  url = testPgUrl();
  schema = freshSchemaName('ceiling_races');
  store = await openPostgresStore(url, { schema });
  cluster = await RaceCluster.start(WORKERS, url, schema);
});

afterAll(async () => {
  await cluster?.close();
  await store?.close();
  if (schema !== undefined) await dropSchema(url, schema);
});

function deal(ops: readonly RaceOp[]): RaceOp[][] {
  const shares: RaceOp[][] = Array.from({ length: WORKERS }, () => []);
  ops.forEach((op, index) => shares[index % WORKERS]?.push(op));
  return shares;
}

/** The results in the order of `ops` as dealt by {@link deal}. */
function inOrder(results: readonly RaceResult[][], count: number): RaceResult[] {
  return Array.from({ length: count }, (_, i) => results[i % WORKERS]?.[Math.floor(i / WORKERS)] ?? 'missing');
}

function tally(results: readonly RaceResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results) counts[result] = (counts[result] ?? 0) + 1;
  return counts;
}

async function setPlane(plane: PlaneCeiling): Promise<void> {
  await store.setPlaneCeiling(plane, { atMs: T_MS, by: BY, action: 'plane.set', subject: 'plane', detail: {} }, 'quotaplane:plane');
}

async function setQuota(tenant: string, quota: TenantQuota): Promise<void> {
  await store.tenant(tenant).setQuota(quota, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
}

describe('PostgreSQL plane-wide and per-agent ceilings raced over 4 processes', () => {
  it(`K11-pg 36 admissions of 36 tenants under a plane-wide ceiling of 6 admit exactly 6; settles racing new admissions never pass it (${REPETITIONS} repetitions)`, async () => {
    await setPlane({ maxConcurrentRuns: 6 });
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      // One tenant per admission, so no two racers meet on a tenant's lock: only the plane's orders them.
      const tenants = Array.from({ length: 36 }, (_, i) => `k11-${rep}-${i}`);
      const first: RaceOp[] = Array.from({ length: 36 }, (_, i) => ({
        kind: 'admit',
        tenant: tenants[i] as string,
        run: `k11-${rep}-run-${i}`,
        atMs: T_MS,
        withBound: true,
      }));
      const results = inOrder(await cluster.fire(deal(first)), first.length);
      expect(tally(results), `repetition ${rep}`).toEqual({ ok: 6, 'TooManyRuns:plane': 30 });
      expect((await store.planeUsage([])).running, `repetition ${rep}`).toBe(6);

      // Wave two: the six settle (concluding) while 24 new admissions race them for the slots.
      const admitted = first.filter((_, i) => results[i] === 'ok') as Extract<RaceOp, { kind: 'admit' }>[];
      const settles: RaceOp[] = admitted.map((op) => ({ kind: 'settlePass', tenant: op.tenant, run: op.run, epoch: 1, atMs: T_MS + 1 }));
      const second: RaceOp[] = Array.from({ length: 24 }, (_, i) => ({
        kind: 'admit',
        tenant: tenants[(i + 12) % 36] as string,
        run: `k11-${rep}-again-${i}`,
        atMs: T_MS + 1,
        withBound: true,
      }));
      const wave = [...settles, ...second];
      const answers = inOrder(await cluster.fire(deal(wave)), wave.length);
      expect(answers.slice(0, settles.length), `repetition ${rep} settles`).toEqual(settles.map(() => 'settled'));
      const again = answers.slice(settles.length);
      for (const answer of again) expect(['ok', 'TooManyRuns:plane'], `repetition ${rep}`).toContain(answer);
      const ok = again.filter((answer) => answer === 'ok').length;
      expect(ok, `repetition ${rep}`).toBeLessThanOrEqual(6);
      expect((await store.planeUsage([])).running, `repetition ${rep}`).toBe(ok);
      let running = 0;
      for (const tenant of tenants) running += await store.tenant(tenant).running();
      expect(running, `repetition ${rep}: the per-tenant counts sum to the plane's`).toBe(ok);
      // Give every slot back (a release), so the next repetition starts from an empty plane.
      for (const [i, op] of second.entries()) {
        if (again[i] === 'ok' && op.kind === 'admit') await store.tenant(op.tenant).release(op.run);
      }
      expect((await store.planeUsage([])).running, `repetition ${rep} after release`).toBe(0);
    }
    await setPlane({});
  });

  it(`K14-pg 24 admissions of one agent in 24 tenants under a plane-wide ceiling of 3 for it admit exactly 3 (${REPETITIONS} repetitions)`, async () => {
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const agent = `crawler-${rep}`;
      await setPlane({ agents: { [agent]: { maxConcurrentRuns: 3 } } });
      const ops: RaceOp[] = Array.from({ length: 24 }, (_, i) => ({
        kind: 'admit',
        tenant: `k14-${rep}-${i}`,
        run: `k14-${rep}-run-${i}`,
        atMs: T_MS,
        agent,
        withBound: true,
      }));
      const results = inOrder(await cluster.fire(deal(ops)), ops.length);
      expect(tally(results), `repetition ${rep}`).toEqual({ ok: 3, 'TooManyRuns:plane-agent': 21 });
      expect((await store.planeUsage([agent])).agents, `repetition ${rep}`).toEqual({ [agent]: 3 });
    }
    await setPlane({});
  });

  it(`K12-pg 16 admissions of one agent at its tenant ceiling of 4 admit exactly 4 (${REPETITIONS} repetitions)`, async () => {
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const tenant = `k12-${rep}`;
      await setQuota(tenant, { period: 'monthly', maxConcurrentRuns: 10, agents: { 'refund-bot': { maxConcurrentRuns: 4 } } });
      const ops: RaceOp[] = Array.from({ length: 16 }, (_, i) => ({
        kind: 'admit',
        tenant,
        run: `k12-${rep}-run-${i}`,
        atMs: T_MS,
        agent: 'refund-bot',
        withBound: true,
      }));
      const results = inOrder(await cluster.fire(deal(ops)), ops.length);
      expect(tally(results), `repetition ${rep}`).toEqual({ ok: 4, 'TooManyRuns:agent': 12 });
      const [usage] = (await store.tenant(tenant).agentUsage?.(['refund-bot'], '2025-10')) ?? [];
      expect(usage?.running, `repetition ${rep}`).toBe(4);
    }
  });

  it(`K13-pg 20 admissions of one agent holding 100 tokens against its 1000 admit exactly 10 (${REPETITIONS} repetitions)`, async () => {
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const tenant = `k13-${rep}`;
      await setQuota(tenant, { period: 'monthly', agents: { 'refund-bot': { maxTokensPerPeriod: 1000 } } });
      const ops: RaceOp[] = Array.from({ length: 20 }, (_, i) => ({
        kind: 'admit',
        tenant,
        run: `k13-${rep}-run-${i}`,
        atMs: T_MS,
        agent: 'refund-bot',
        budget: { maxTokens: 100, maxCallTokens: 0 },
        withBound: true,
      }));
      const results = inOrder(await cluster.fire(deal(ops)), ops.length);
      expect(tally(results), `repetition ${rep}`).toEqual({ ok: 10, 'SpentOut:agent': 10 });
      const [usage] = (await store.tenant(tenant).agentUsage?.(['refund-bot'], '2025-10')) ?? [];
      expect(usage?.reserved, `repetition ${rep}`).toEqual({ tokens: 1000, minorUnits: 0 });
      expect(await store.tenant(tenant).reserved('2025-10'), `repetition ${rep}`).toEqual({ tokens: 1000, minorUnits: 0 });
    }
  });
});

describe('the books after the tests above', () => {
  it('every derived figure agrees with the rows it summarises once every race (books-agree.ts)', async () => {
    const differences = await booksDisagreements(url, schema);
    expect(differences, describeDifferences(differences)).toEqual([]);
  });
});
