import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import type { AdmitOutcome } from '../../src/store/types.js';
import { closeSchemaStore, openSchemaStore, type SchemaStore } from './pg-test-support.js';

// A write decided on kept rows (postgres-batcher.ts `#decideOnKept`) raises each tenant's books'
// version with an UPDATE whose row lock waits for a transaction holding the tenant's admission
// lock (migrations/0002_books.sql `quota_books_write`). When that holder rolls back, the write goes
// on: it must not then stand on what it checked or read before the wait (the plane ceiling, the
// applied instant). These tests hold the lock from a plain connection and roll it back, as any
// failed lock holder does (a batch whose transaction is refused, a quota change that fails).
//
// NEEDS SQL (migrations/0002_books.sql, the lead's): both tests fail on the write as it stands, and
// are marked `it.fails` until it changes (take the version row without waiting: a row held by a
// lock holder answers stale, and the batch is decided under the lock); then make them plain `it`.

const T_MS = Date.UTC(2026, 11, 1, 12);
const BY = { actor: 'kept-wait-test', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 500, maxCallTokens: 500 };

let opened: SchemaStore;
let other: PostgresQuotaStore;
let s: string;

beforeAll(async () => {
  opened = await openSchemaStore('kept_waits', { poolSize: 2 });
  other = await openPostgresStore(opened.url, { schema: opened.schema });
  s = `"${opened.schema}"`;
});

afterAll(async () => {
  await other?.close();
  await closeSchemaStore(opened);
});

async function setQuota(on: PostgresQuotaStore, tenant: string, maxConcurrentRuns: number): Promise<void> {
  await on.tenant(tenant).setQuota({ period: 'monthly', maxConcurrentRuns }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
}

function admit(on: PostgresQuotaStore, tenant: string, run: string, extra: Record<string, unknown> = {}): Promise<AdmitOutcome> {
  return on.tenant(tenant).admit({ run, budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 60_000, ...extra });
}

// Resolves once a backend other than the admin's waits on a row lock in a kept write.
async function keptWriteWaiting(): Promise<void> {
  for (let tries = 0; tries < 200; tries += 1) {
    const { rows } = await opened.admin.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%quota_books_write%' AND pid <> pg_backend_pid()`,
    );
    if (Number(rows[0]?.n ?? 0) > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no kept write waited for the tenant lock');
}

describe('PostgreSQL: a kept write that waited for a tenant lock its holder rolled back', () => {
  it.fails('L94 a decision that waited past its bound in the kept write is not applied', async () => {
    const tenant = 'wait-l94';
    await setQuota(opened.store, tenant, 5);
    expect((await admit(opened.store, tenant, 'r1')).ok).toBe(true);
    await opened.admin.query('BEGIN');
    await opened.admin.query(`SELECT ${s}.quota_admission_lock($1)`, [tenant]);
    // Applied at the instant read before the write; it may wait 200 ms at most.
    const startedMs = Date.now();
    const asked = admit(opened.store, tenant, 'r2', { atMs: startedMs, leaseMs: 500, applied: { nowMs: () => Date.now(), maxWaitMs: 200 } }).then(
      (outcome) => ({ outcome, answeredMs: Date.now() }),
      (error: unknown) => ({ error }),
    );
    await keptWriteWaiting();
    await new Promise((resolve) => setTimeout(resolve, 800));
    await opened.admin.query('ROLLBACK');
    const answer = await asked;
    // Decided under the lock, it waited 800 ms for it: refused, nothing written (L94), never an ok
    // answer whose lease lapsed while it waited (L93).
    expect(answer).toMatchObject({ error: { code: 'STORE_UNAVAILABLE', details: { reason: 'waited-too-long' } } });
    expect(await opened.store.tenant(tenant).running()).toBe(1);
  });

  it.fails('K3 a plane ceiling set while a kept write waits is counted: the plane is never over its ceiling', async () => {
    await setQuota(opened.store, 'wait-k3-a', 5);
    await setQuota(opened.store, 'wait-k3-b', 5);
    expect((await admit(opened.store, 'wait-k3-a', 'a1')).ok).toBe(true);
    await opened.admin.query('BEGIN');
    await opened.admin.query(`SELECT ${s}.quota_admission_lock($1)`, ['wait-k3-a']);
    const asked = admit(opened.store, 'wait-k3-a', 'a2');
    await keptWriteWaiting();
    // The write has found no ceiling and waits; meanwhile a ceiling of one slot more than the
    // plane holds is set, and another tenant takes that slot under it.
    const ceiling = (await other.planeUsage([])).running + 1;
    await other.setPlaneCeiling({ maxConcurrentRuns: ceiling }, { atMs: T_MS, by: BY, action: 'plane.set', subject: 'plane', detail: {} }, 'quotaplane:plane');
    expect((await admit(other, 'wait-k3-b', 'b1')).ok).toBe(true);
    await opened.admin.query('ROLLBACK');
    const outcome = await asked;
    expect(outcome).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
    expect((await opened.store.planeUsage([])).running).toBe(ceiling);
  });
});
