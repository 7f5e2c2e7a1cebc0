import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';
import { closeSchemaStore, openSchemaStore, type SchemaStore } from './pg-test-support.js';

// Races between store instances that each keep the tenant's rows (postgres-books-cache.ts): every
// instance has decided the tenant before each burst, so each burst starts on kept rows everywhere,
// and every write but the first of a round finds the version moved. The ceilings must hold
// exactly, and the books must agree with their rows (books-agree.ts).

const T_MS = Date.UTC(2026, 11, 1, 12);
const BY = { actor: 'kept-race', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 100, maxCallTokens: 100 };

let opened: SchemaStore;
let stores: PostgresQuotaStore[];

beforeAll(async () => {
  opened = await openSchemaStore('kept_races', { poolSize: 4 });
  stores = [opened.store];
  for (let i = 0; i < 2; i += 1) stores.push(await openPostgresStore(opened.url, { schema: opened.schema, poolSize: 4 }));
});

afterAll(async () => {
  for (const store of stores?.slice(1) ?? []) await store.close();
  await closeSchemaStore(opened);
});

function on(index: number): PostgresQuotaStore {
  return stores[index % stores.length] as PostgresQuotaStore;
}

describe('PostgreSQL: instances racing on kept rows', () => {
  it('C2 K11 bursts of admissions from three instances on kept rows admit exactly up to the ceilings', async () => {
    const tenant = 'race-c2';
    const max = 3;
    await on(0)
      .tenant(tenant)
      .setQuota({ period: 'monthly', maxConcurrentRuns: max, maxTokensPerPeriod: 1_000 }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
    const open = new Set<string>();
    let settledTokens = 0;
    for (let round = 0; round < 8; round += 1) {
      // Every instance decides the tenant once, so each keeps its rows.
      for (let i = 0; i < stores.length; i += 1) {
        await on(i).tenant(tenant).rateRoom('tool://warm', [{ count: 1_000, windowSeconds: 60 }], T_MS);
      }
      const runs = Array.from({ length: 12 }, (_, k) => `b${round}-${k}`);
      const outcomes = await Promise.all(
        runs.map((run, k) => on(k).tenant(tenant).admit({ run, budget: BUDGET, width: 1, atMs: T_MS + round, leaseMs: 600_000 })),
      );
      for (const [k, outcome] of outcomes.entries()) if (outcome.ok) open.add(runs[k] as string);
      expect(open.size).toBeLessThanOrEqual(max);
      expect(await on(0).tenant(tenant).running()).toBe(open.size);
      // Settle some, from random instances, concurrently with retries of the same settle.
      const closing = [...open].slice(0, 1 + (round % 2));
      await Promise.all(
        closing.flatMap((run, k) =>
          [0, 1].map((again) =>
            on(k + again + round)
              .tenant(tenant)
              .settlePass({ run, epoch: 1, spend: { tokens: 40, minorUnits: 0 }, concludes: true, atMs: T_MS + round }),
          ),
        ),
      );
      for (const run of closing) {
        open.delete(run);
        settledTokens += 40;
      }
      expect(await on(1).tenant(tenant).running()).toBe(open.size);
      expect((await on(2).tenant(tenant).spent('2026-12')).tokens).toBe(settledTokens);
    }
    expect(describeDifferences(await booksDisagreements(opened.url, opened.schema))).toBe('');
  });

  it('C11 holds racing from three instances on kept rows never reserve past the spend ceiling', async () => {
    const tenant = 'race-c12';
    await on(0)
      .tenant(tenant)
      .setQuota({ period: 'monthly', maxConcurrentRuns: 100, maxTokensPerPeriod: 4_000 }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
    for (let i = 0; i < stores.length; i += 1) {
      await on(i).tenant(tenant).admit({ run: `warm-${i}`, budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 600_000 });
    }
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, k) => on(k).tenant(tenant).admit({ run: `h${k}`, budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 600_000 })),
    );
    const admitted = outcomes.filter((outcome) => outcome.ok).length;
    // 4,000 tokens held at 200 a run (the budget's worst case), three taken by the warm-up runs.
    expect(admitted).toBe(17);
    expect(describeDifferences(await booksDisagreements(opened.url, opened.schema))).toBe('');
  });
});
