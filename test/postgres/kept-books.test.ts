import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import type { AdmitOutcome, RateOutcome } from '../../src/store/types.js';
import { closeSchemaStore, openSchemaStore } from './pg-test-support.js';

// A store instance keeps each tenant's rows after a batch and decides the tenant's next batch on
// them, writing in one statement only if the tenant's books are still at the version its rows
// were read at (postgres-books-cache.ts, migrations/0001_quotaplane.sql). These tests prove the kept
// rows are used, and that whatever another instance changes in between (a slot taken or freed, a
// halt, the same run admitted) is never decided on stale: the write finds the version moved, and
// the decision is made again under the tenant's lock.

const T_MS = Date.UTC(2026, 11, 1, 12);
const BY = { actor: 'kept-test', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 500, maxCallTokens: 500 };

let url: string;
let schema: string;
let store: PostgresQuotaStore;
let admin: pg.Client;
let other: PostgresQuotaStore;
let tenantCount = 0;

beforeAll(async () => {
  ({ url, schema, store, admin } = await openSchemaStore('kept_books', { poolSize: 2 }));
  other = await openPostgresStore(url, { schema });
});

afterAll(async () => {
  await other?.close();
  await closeSchemaStore({ url, schema, store, admin });
});

let restoreQuery: (() => void) | undefined;
afterEach(() => {
  restoreQuery?.();
  restoreQuery = undefined;
});

// The book statements this process sends from now on, by function.
function countBookStatements(): { load: number; write: number } {
  const counts = { load: 0, write: 0 };
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
    if (typeof text === 'string' && text.includes('quota_books_load')) counts.load += 1;
    if (typeof text === 'string' && text.includes('quota_books_write')) counts.write += 1;
    return (query as (...given: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  restoreQuery = () => {
    pg.Client.prototype.query = query;
  };
  return counts;
}

// A tenant of its own per test, with at most `maxConcurrentRuns` slots.
async function freshTenant(maxConcurrentRuns: number): Promise<string> {
  tenantCount += 1;
  const tenant = `kept-${tenantCount}`;
  await store
    .tenant(tenant)
    .setQuota({ period: 'monthly', maxConcurrentRuns }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
  return tenant;
}

function admit(on: PostgresQuotaStore, tenant: string, run: string): Promise<AdmitOutcome> {
  return on.tenant(tenant).admit({ run, budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 60_000 });
}

// One dispatch of run 'r' on grant tool://kept under at most `count` a minute.
function dispatch(on: PostgresQuotaStore, tenant: string, key: string, count = 2): Promise<RateOutcome> {
  return on.tenant(tenant).reserveRate({ grant: 'tool://kept', run: 'r', dispatch: key, ceilings: [{ count, windowSeconds: 60 }], atMs: T_MS, exempt: false });
}

function refusalCode(outcome: AdmitOutcome): string | null {
  return outcome.ok ? null : outcome.refusal.code;
}

describe('PostgreSQL: a tenant decided on the rows an instance kept', () => {
  it("the tenant's next decision on the same instance is one statement, the write, and reads nothing", async () => {
    const tenant = await freshTenant(5);
    expect((await admit(store, tenant, 'r1')).ok).toBe(true);
    const counts = countBookStatements();
    expect((await admit(store, tenant, 'r2')).ok).toBe(true);
    expect(counts).toEqual({ load: 0, write: 1 });
    expect(await store.tenant(tenant).running()).toBe(2);
  });

  it('C2 a slot another instance took in between is counted: the last slot is not given twice', async () => {
    const tenant = await freshTenant(2);
    expect((await admit(store, tenant, 'r1')).ok).toBe(true);
    expect((await admit(other, tenant, 'r2')).ok).toBe(true);
    // This instance's kept rows still say one slot is taken.
    expect(refusalCode(await admit(store, tenant, 'r3'))).toBe('TooManyRuns');
    expect(await store.tenant(tenant).running()).toBe(2);
  });

  it('C3 a refusal is never decided on stale rows: a slot another instance freed admits the next run', async () => {
    const tenant = await freshTenant(2);
    expect((await admit(store, tenant, 'r1')).ok).toBe(true);
    expect((await admit(store, tenant, 'r2')).ok).toBe(true);
    expect(refusalCode(await admit(store, tenant, 'r3'))).toBe('TooManyRuns');
    const settled = await other
      .tenant(tenant)
      .settle({ run: 'r1', epoch: 1, period: '2026-12', spend: { tokens: 10, minorUnits: 0 }, releaseSlot: true, concludes: true });
    expect(settled).toBe('settled');
    // The kept rows still hold r1's slot; the store does not.
    expect((await admit(store, tenant, 'r3')).ok).toBe(true);
    expect(await store.tenant(tenant).running()).toBe(2);
  });

  it('L1 a halt thrown on another instance refuses the next admission here', async () => {
    const tenant = await freshTenant(5);
    expect((await admit(store, tenant, 'r1')).ok).toBe(true);
    await other.tenant(tenant).setHalt({ scope: { kind: 'tenant' }, reason: 'incident', by: BY, atMs: T_MS });
    expect(refusalCode(await admit(store, tenant, 'r2'))).toBe('Halted');
  });

  it('L13 a run another instance admitted is not admitted again here as new: the retry is answered from the books', async () => {
    const tenant = await freshTenant(5);
    expect((await admit(store, tenant, 'r1')).ok).toBe(true);
    const first = await admit(other, tenant, 'shared');
    expect(first.ok).toBe(true);
    const retried = await admit(store, tenant, 'shared');
    expect(retried).toEqual(first);
    expect(await store.tenant(tenant).running()).toBe(2);
  });

  it('C32 a dispatch another instance recorded counts in the window here', async () => {
    const tenant = await freshTenant(5);
    expect(await dispatch(store, tenant, 'd1')).toEqual({ ok: true });
    expect(await dispatch(other, tenant, 'd2')).toEqual({ ok: true });
    expect(await dispatch(store, tenant, 'd3')).toMatchObject({ ok: false, refusal: { code: 'RateLimited', reached: 2 } });
  });

  it('C33 a dispatch key another instance recorded is admitted here unjudged, on a full window', async () => {
    const tenant = await freshTenant(5);
    expect(await dispatch(store, tenant, 'd1')).toEqual({ ok: true });
    expect(await dispatch(other, tenant, 'd2')).toEqual({ ok: true });
    expect(await dispatch(store, tenant, 'd2')).toEqual({ ok: true });
    expect(await dispatch(store, tenant, 'd1')).toEqual({ ok: true });
    expect(await dispatch(store, tenant, 'd3')).toMatchObject({ ok: false, refusal: { code: 'RateLimited' } });
  });

  it("a tenant's next dispatch on the same instance is one statement, the write", async () => {
    const tenant = await freshTenant(5);
    expect(await dispatch(store, tenant, 'd1', 100)).toEqual({ ok: true });
    expect(await dispatch(store, tenant, 'd2', 100)).toEqual({ ok: true });
    const counts = countBookStatements();
    expect(await dispatch(store, tenant, 'd3', 100)).toEqual({ ok: true });
    expect(counts).toEqual({ load: 0, write: 1 });
  });
  it('C3 a run whose rows the instance forgot (past 128 kept runs) is settled from the books, once', async () => {
    const tenant = await freshTenant(500);
    for (let index = 0; index < 140; index += 1) expect((await admit(store, tenant, `many-${index}`)).ok).toBe(true);
    const settle = () =>
      store.tenant(tenant).settle({ run: 'many-0', epoch: 1, period: '2026-12', spend: { tokens: 7, minorUnits: 0 }, releaseSlot: true, concludes: true });
    expect(await settle()).toBe('settled');
    expect(await settle()).toBe('already-settled');
    expect(await store.tenant(tenant).running()).toBe(139);
    expect(await store.tenant(tenant).spent('2026-12')).toEqual({ tokens: 7, minorUnits: 0 });
  });
});
