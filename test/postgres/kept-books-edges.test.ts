import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import type { AdmitOutcome } from '../../src/store/types.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';
import { closeSchemaStore, openSchemaStore, type SchemaStore } from './pg-test-support.js';

// Kept rows (postgres-books-cache.ts) at their edges: retention on another instance, a batch of
// two tenants one of which another instance wrote, a tenant past the bound of kept runs or of kept
// dispatch keys, a period that rolls over between two batches on kept rows, and a waiter queued
// on another instance.

const T_MS = Date.UTC(2026, 11, 1, 12);
const BY = { actor: 'kept-edge', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 500, maxCallTokens: 500 };

let opened: SchemaStore;
let store: PostgresQuotaStore;
let other: PostgresQuotaStore;

beforeAll(async () => {
  opened = await openSchemaStore('kept_edges', { poolSize: 2 });
  store = opened.store;
  other = await openPostgresStore(opened.url, { schema: opened.schema });
});

afterAll(async () => {
  await other?.close();
  await closeSchemaStore(opened);
});

async function quota(tenant: string, maxConcurrentRuns: number, extra: Record<string, unknown> = {}): Promise<void> {
  await store
    .tenant(tenant)
    .setQuota({ period: 'monthly', maxConcurrentRuns, ...extra }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
}

function admit(on: PostgresQuotaStore, tenant: string, run: string, atMs = T_MS): Promise<AdmitOutcome> {
  return on.tenant(tenant).admit({ run, budget: BUDGET, width: 1, atMs, leaseMs: 60_000 });
}

async function agree(): Promise<void> {
  expect(describeDifferences(await booksDisagreements(opened.url, opened.schema))).toBe('');
}

describe('PostgreSQL: kept rows at their edges', () => {
  it('R4 a run pruned on another instance is not admitted again here as new', async () => {
    const tenant = 'edge-prune';
    await quota(tenant, 5);
    expect((await admit(store, tenant, 'old')).ok).toBe(true);
    expect(await store.tenant(tenant).settlePass({ run: 'old', epoch: 1, spend: { tokens: 10, minorUnits: 0 }, concludes: true, atMs: T_MS })).toMatchObject({ outcome: 'settled' });
    const pruned = await other.tenant(tenant).pruneRuns({ runs: ['old'], closedAtOrBeforeMs: T_MS + 1, atMs: T_MS + 2, by: BY });
    expect(pruned.runs).toEqual(['old']);
    // This instance's kept rows still hold the concluded run, not its tombstone.
    const again = await admit(store, tenant, 'old', T_MS + 3).catch((error: { code?: string }) => ({ threw: error.code }));
    const resumed = await store.tenant(tenant).resume({ run: 'old', atMs: T_MS + 3, leaseMs: 60_000 }).catch((error: { code?: string }) => ({ threw: error.code }));
    expect({ again, resumed }).toMatchObject({ again: { threw: 'CONFLICT' }, resumed: { threw: 'CONFLICT' } });
    expect(await store.tenant(tenant).running()).toBe(0);
    await agree();
  });

  it('C2 a batch of two kept tenants, one written elsewhere since, is decided again for both', async () => {
    await quota('edge-two-a', 2);
    await quota('edge-two-b', 2);
    expect((await Promise.all([admit(store, 'edge-two-a', 'a1'), admit(store, 'edge-two-b', 'b1')])).every((o) => o.ok)).toBe(true);
    expect((await admit(other, 'edge-two-b', 'b2')).ok).toBe(true);
    // One batch: a's rows are current, b's are not (b is full).
    const [a2, b3] = await Promise.all([admit(store, 'edge-two-a', 'a2'), admit(store, 'edge-two-b', 'b3')]);
    expect(a2.ok).toBe(true);
    expect(b3).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
    // And a's next batch here, on the rows kept by that one, still counts right.
    expect((await admit(store, 'edge-two-a', 'a3')) as AdmitOutcome).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
    expect([await store.tenant('edge-two-a').running(), await store.tenant('edge-two-b').running()]).toEqual([2, 2]);
    await agree();
  });

  it('past 128 runs, a run another instance settled is read again here', async () => {
    const tenant = 'edge-runs';
    await quota(tenant, 200);
    for (let k = 0; k < 140; k += 1) expect((await admit(store, tenant, `r${k}`)).ok).toBe(true);
    expect(await other.tenant(tenant).settlePass({ run: 'r5', epoch: 1, spend: { tokens: 7, minorUnits: 0 }, concludes: true, atMs: T_MS })).toMatchObject({ outcome: 'settled' });
    const settledAgain = await store.tenant(tenant).settlePass({ run: 'r5', epoch: 1, spend: { tokens: 7, minorUnits: 0 }, concludes: true, atMs: T_MS });
    expect(settledAgain).toMatchObject({ outcome: 'already-settled' });
    expect((await store.tenant(tenant).spent('2026-12')).tokens).toBe(7);
    expect(await store.tenant(tenant).running()).toBe(139);
    await agree();
  });

  it('C33 past 1,024 kept dispatch keys, an early key is admitted unjudged and counted once', async () => {
    const tenant = 'edge-keys';
    await quota(tenant, 5);
    const ceilings = [{ count: 1_100, windowSeconds: 3_600 }];
    const reserve = (on: PostgresQuotaStore, dispatch: string) =>
      on.tenant(tenant).reserveRate({ grant: 'tool://edge', run: 'r', dispatch, ceilings, atMs: T_MS, exempt: false });
    for (let k = 0; k < 1_100; k += 1) expect(await reserve(store, `d${k}`)).toEqual({ ok: true });
    expect(await reserve(store, 'd3')).toEqual({ ok: true });
    expect(await reserve(store, 'd1099')).toEqual({ ok: true });
    expect(await reserve(store, 'd-new')).toMatchObject({ ok: false, refusal: { code: 'RateLimited', reached: 1_100 } });
    expect(await reserve(other, 'd-new')).toMatchObject({ ok: false, refusal: { code: 'RateLimited', reached: 1_100 } });
    const { rows } = await opened.admin.query<{ n: string }>(`SELECT count(*) AS n FROM "${opened.schema}".quota_rate WHERE tenant = $1`, [tenant]);
    expect(Number(rows[0]?.n)).toBe(1_100);
  });

  it('a month rolls over between two batches on kept rows: the new month starts empty', async () => {
    const tenant = 'edge-month';
    await quota(tenant, 5, { maxTokensPerPeriod: 1_000 });
    const endMs = Date.UTC(2026, 11, 31, 23, 59, 59);
    expect((await admit(store, tenant, 'dec', endMs)).ok).toBe(true);
    expect((await admit(store, tenant, 'dec2', endMs)).ok).toBe(false);
    const jan = await admit(store, tenant, 'jan', endMs + 2_000);
    expect(jan).toMatchObject({ ok: true, period: '2027-01' });
    await agree();
  });

  it('W1 a waiter queued on another instance is served before this instance admits past it', async () => {
    const tenant = 'edge-wait';
    await quota(tenant, 1);
    const terms = { untilMs: T_MS + 60_000, leaseMs: 30_000 };
    const ask = (run: string) => ({ run, budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 60_000 });
    expect((await admit(store, tenant, 'r1')).ok).toBe(true);
    expect(await other.tenant(tenant).admitOrWait(ask('w1'), terms)).toMatchObject({ ok: false, waiting: true, position: 1 });
    // This instance kept the tenant full with nobody waiting; the queue is now ahead of r2.
    expect(await admit(store, tenant, 'r2')).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
    expect(await store.tenant(tenant).settlePass({ run: 'r1', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: true, atMs: T_MS })).toMatchObject({ outcome: 'settled' });
    expect(await admit(store, tenant, 'r3')).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
    expect(await other.tenant(tenant).collectWaiter(ask('w1'), terms)).toMatchObject({ ok: true, run: 'w1' });
    expect(await admit(store, tenant, 'r4')).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
    expect(await store.tenant(tenant).running()).toBe(1);
    await agree();
  });
});
