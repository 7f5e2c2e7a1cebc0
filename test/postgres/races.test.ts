import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';
import { RaceCluster } from './race-cluster.js';
import type { RaceOp, RaceResult } from './race-protocol.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';

// Exactness across instances (docs/design/decisions.md "Exact across instances"), proven on a real
// server: four OS processes, each with its own store and pool, fire at the same moment. Every race
// is repeated REPETITIONS times, each on a fresh tenant.

const REPETITIONS = 20;
const WORKERS = 4;
const T_MS = 1_760_000_000_000;
const LIBRARY = { actor: 'race-test', basis: 'asserted' } as const;

let url: string;
let schema: string;
let store: PostgresQuotaStore;
let cluster: RaceCluster;

beforeAll(async () => {
  url = testPgUrl();
  schema = freshSchemaName('races');
  store = await openPostgresStore(url, { schema });
  cluster = await RaceCluster.start(WORKERS, url, schema);
});

afterAll(async () => {
  await cluster?.close();
  await store?.close();
  if (schema !== undefined) await dropSchema(url, schema);
});

/** Deals `ops` round-robin over the workers, so each process gets an equal share. */
function deal(ops: readonly RaceOp[]): RaceOp[][] {
  const shares: RaceOp[][] = Array.from({ length: WORKERS }, () => []);
  ops.forEach((op, index) => shares[index % WORKERS]?.push(op));
  return shares;
}

/** How many results of each kind, e.g. `{ ok: 4, TooManyRuns: 12 }`. */
function tally(results: readonly RaceResult[][]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const result of results.flat()) counts[result] = (counts[result] ?? 0) + 1;
  return counts;
}

describe('PostgreSQL races over 4 processes', () => {
  it(`X1 16 concurrent admissions of new runs at maxConcurrentRuns 4 admit exactly 4 and running() is 4 (${REPETITIONS} repetitions)`, async () => {
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const tenant = `x1-${rep}`;
      await store.tenant(tenant).setQuota({ period: 'monthly', maxConcurrentRuns: 4 }, {
        atMs: T_MS,
        by: LIBRARY,
        action: 'quota.set',
        subject: 'quota',
        detail: {},
      });
      const runs = Array.from({ length: 16 }, (_, i) => `x1-${rep}-run-${i}`);
      const results = await cluster.fire(deal(runs.map((run) => ({ kind: 'admit', tenant, run, atMs: T_MS }))));
      expect(tally(results), `repetition ${rep}`).toEqual({ ok: 4, TooManyRuns: 12 });
      const admitted = runs.filter((_, i) => results[i % WORKERS]?.[Math.floor(i / WORKERS)] === 'ok').sort();
      expect(await store.tenant(tenant).running(), `repetition ${rep}`).toBe(4);
      expect(await store.tenant(tenant).runningRuns(100), `repetition ${rep}`).toEqual(admitted);
    }
  });

  it(`C42 20 holds of 100 tokens against 1000 admit exactly 10 and reserved is 1000 (${REPETITIONS} repetitions)`, async () => {
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const tenant = `c42-${rep}`;
      const ops: RaceOp[] = Array.from({ length: 20 }, (_, i) => ({
        kind: 'reserve',
        tenant,
        run: `c42-${rep}-run-${i}`,
        quota: { period: 'monthly', maxTokensPerPeriod: 1000 },
        hold: { period: '2997-01', amount: { tokens: 100, minorUnits: 0 } },
        atMs: T_MS,
      }));
      const results = await cluster.fire(deal(ops));
      expect(tally(results), `repetition ${rep}`).toEqual({ ok: 10, SpentOut: 10 });
      expect(await store.tenant(tenant).reserved('2997-01'), `repetition ${rep}`).toEqual({ tokens: 1000, minorUnits: 0 });
      // A refused hold takes no slot (docs/design/rules.md#c12): only the ten admitted runs hold one.
      expect(await store.tenant(tenant).running(), `repetition ${rep}`).toBe(10);
    }
  });

  it(`C41 40 dispatches of distinct runs at 10 per 3600 s admit exactly 10 (${REPETITIONS} repetitions)`, async () => {
    const grant = 'tool://payments/refund';
    const ceilings = [{ count: 10, windowSeconds: 3600 }];
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const tenant = `c41-${rep}`;
      const runs = Array.from({ length: 40 }, (_, i) => `c41-${rep}-run-${i}`);
      const handle = store.tenant(tenant);
      await Promise.all(runs.map((run) => handle.admit({ run, budget: {}, width: 1, atMs: T_MS, leaseMs: 60_000 })));
      const ops: RaceOp[] = runs.map((run, i) => ({
        kind: 'dispatch',
        tenant,
        run,
        grant,
        dispatch: i.toString(16).padStart(64, '0'),
        ceilings,
        atMs: T_MS + i,
      }));
      const results = await cluster.fire(deal(ops));
      expect(tally(results), `repetition ${rep}`).toEqual({ ok: 10, RateLimited: 30 });
      const room = await handle.rateRoom(grant, ceilings, T_MS + 40);
      expect(room.ok ? null : room.refusal, `repetition ${rep}`).toMatchObject({ code: 'RateLimited', reached: 10 });
    }
  });

  it(`a halt thrown through one instance refuses the very next admission on every other instance (${REPETITIONS} repetitions)`, async () => {
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const tenant = `halt-${rep}`;
      const others = (suffix: string): RaceOp[][] => [
        [],
        ...[1, 2, 3].map((worker): RaceOp[] => [{ kind: 'admit', tenant, run: `halt-${rep}-${suffix}-${worker}`, atMs: T_MS }]),
      ];
      expect(tally(await cluster.fire(others('before'))), `repetition ${rep}: before the halt`).toEqual({ ok: 3 });
      const reason = `incident ${rep}: a looping agent`;
      const thrown = await cluster.fire([
        [{ kind: 'setHalt', tenant, halt: { scope: { kind: 'tenant' }, reason, by: LIBRARY, atMs: T_MS } }],
        [],
        [],
        [],
      ]);
      expect(thrown[0], `repetition ${rep}: the halt`).toEqual(['ok']);
      expect(tally(await cluster.fire(others('after'))), `repetition ${rep}: after the halt`).toEqual({ [`Halted:${reason}`]: 3 });
      expect(await store.tenant(tenant).running(), `repetition ${rep}`).toBe(3);
    }
  });

  it(`a heartbeat and a sweep of one lapsed pass never both win: the run is either renewed and holding its slot, or stranded without it (${REPETITIONS} repetitions)`, async () => {
    const LEASE_MS = 60_000;
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const tenant = `sweep-${rep}`;
      const run = `sweep-${rep}-run`;
      const handle = store.tenant(tenant);
      await handle.admit({ run, budget: {}, width: 1, atMs: T_MS, leaseMs: LEASE_MS });
      const at = T_MS + LEASE_MS + 1; // the lease has lapsed, and no sweep acted on it yet
      const heartbeat: RaceOp = { kind: 'heartbeat', tenant, run, epoch: 1, atMs: at, leaseMs: LEASE_MS };
      const sweep: RaceOp = { kind: 'sweepRun', tenant, run, atMs: at };
      const results = (await cluster.fire([[heartbeat], [sweep], [heartbeat], [sweep]])).flat();
      const renewed = results.filter((result) => result === 'ok').length;
      const swept = results.filter((result) => result === 'swept').length;
      const [summary] = await handle.runs({ limit: 1 });
      if (renewed > 0) {
        expect({ rep, results: tally([results]), status: summary?.status, holdsSlot: summary?.holdsSlot }).toEqual({
          rep,
          results: { ok: 2, untouched: 2 },
          status: 'running',
          holdsSlot: true,
        });
      } else {
        expect({ rep, swept, results: tally([results]), status: summary?.status, holdsSlot: summary?.holdsSlot }).toEqual({
          rep,
          swept: 1,
          results: { swept: 1, untouched: 1, 'error:CONFLICT': 2 },
          status: 'stranded',
          holdsSlot: false,
        });
      }
    }
  });
});

describe('the books after the tests above', () => {
  it(`E9 sixteen settles over four processes crossing 80 % of a ceiling together write its event once; settled again after a restart, none (${REPETITIONS} repetitions)`, async () => {
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const tenant = `e9-${rep}`;
      const quota = { period: 'monthly', maxTokensPerPeriod: 2000 } as const;
      await store.tenant(tenant).setQuota(quota, { atMs: T_MS, by: LIBRARY, action: 'quota.set', subject: 'quota', detail: {} });
      const runs = Array.from({ length: 16 }, (_, index) => `e9-${rep}-${index}`);
      const budget = { maxTokens: 100, maxCallTokens: 0 };
      expect(tally(await cluster.fire(deal(runs.map((run): RaceOp => ({ kind: 'admit', tenant, run, atMs: T_MS, budget }))))), `repetition ${rep}: admitted`).toEqual({ ok: 16 });
      const settles = runs.map((run): RaceOp => ({ kind: 'settlePass', tenant, run, epoch: 1, atMs: T_MS + 1, tokens: 100 }));
      expect(tally(await cluster.fire(deal(settles))), `repetition ${rep}: settled`).toEqual({ settled: 16 });
      const crossed = await store.eventsAfter(0, 1000, tenant);
      expect(crossed.map((event) => [event.type, (event.data as { threshold?: unknown }).threshold]), `repetition ${rep}`).toEqual([['threshold.crossed', { percent: 80 }]]);
      expect(crossed[0]?.data).toMatchObject({ settled: 1600, thresholdAmount: 1600 });
      // A restart: a new instance retries every settle and sets the same quota again. Nothing is written twice.
      const restarted = await openPostgresStore(url, { schema });
      try {
        for (const run of runs) {
          const again = await restarted.tenant(tenant).settlePass({ run, epoch: 1, spend: { tokens: 100, minorUnits: 0 }, concludes: true, atMs: T_MS + 2 });
          expect(again.outcome).toBe('already-settled');
        }
        await restarted.tenant(tenant).setQuota(quota, { atMs: T_MS + 3, by: LIBRARY, action: 'quota.set', subject: 'quota', detail: {} });
      } finally {
        await restarted.close();
      }
      expect(await store.eventsAfter(0, 1000, tenant), `repetition ${rep}: after the restart`).toEqual(crossed);
    }
  });

  it(`E8 a reader following the event log by its cursor while four processes write events misses none (${REPETITIONS} repetitions)`, async () => {
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const tenants = Array.from({ length: 12 }, (_, index) => `e8-${rep}-${index}`);
      const budget = { maxTokens: 100, maxCallTokens: 0 };
      for (const tenant of tenants) {
        await store.tenant(tenant).setQuota({ period: 'monthly', maxTokensPerPeriod: 100 }, { atMs: T_MS, by: LIBRARY, action: 'quota.set', subject: 'quota', detail: {} });
      }
      expect(tally(await cluster.fire(deal(tenants.map((tenant): RaceOp => ({ kind: 'admit', tenant, run: `${tenant}-run`, atMs: T_MS, budget })))))).toEqual({ ok: 12 });
      const [newest] = (await store.eventsAfter(0, 100_000)).slice(-1);
      let cursor = newest?.seq ?? 0;
      const seen: number[] = [];
      let firing = true;
      const follow = (async () => {
        for (;;) {
          const page = await store.eventsAfter(cursor, 1000);
          for (const event of page) seen.push(event.seq);
          cursor = page.at(-1)?.seq ?? cursor;
          if (!firing && page.length === 0) return;
        }
      })();
      const settles = tenants.map((tenant): RaceOp => ({ kind: 'settlePass', tenant, run: `${tenant}-run`, epoch: 1, atMs: T_MS + 1, tokens: 100 }));
      expect(tally(await cluster.fire(deal(settles)))).toEqual({ settled: 12 });
      firing = false;
      await follow;
      const written = (await store.eventsAfter(newest?.seq ?? 0, 100_000)).map((event) => event.seq);
      expect(written, `repetition ${rep}: 80 %, 100 % and the ceiling per tenant`).toHaveLength(36);
      expect(seen, `repetition ${rep}: the follower saw every event once, in order`).toEqual(written);
    }
  });

  it('every derived figure agrees with the rows it summarises once every race (books-agree.ts)', async () => {
    const differences = await booksDisagreements(url, schema);
    expect(differences, describeDifferences(differences)).toEqual([]);
  });
});
