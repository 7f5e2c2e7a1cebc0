import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { closeSchemaStore, openSchemaStore, type SchemaStore } from '../postgres/pg-test-support.js';
import { describeOn } from '../test-backends.js';
import { until } from '../until.js';
import { failure, T0, tempDir } from './plane-fixtures.js';

// docs/design/decisions.md "Every acknowledgement is true": every instant a decision records is the
// instant it is applied, not the instant it was asked for. A decision that waited for another
// process's write lock (SQLite) or for another transaction's tenant lock (PostgreSQL) is recorded
// when it got the lock, so its lease has not lapsed when it is answered; one that waited longer
// than `maxDecisionWaitMs` is `STORE_UNAVAILABLE` and holds nothing.

const ONE_SLOT = { period: 'monthly', maxConcurrentRuns: 1 } as const;

async function answerOf<T>(pending: Promise<{ answer: Promise<T> }>): Promise<T> {
  return (await pending).answer;
}

describeOn('sqlite', 'SQLite: a decision waiting for another process’s write lock is recorded when it is applied', () => {
  let dir: ReturnType<typeof tempDir>;
  let store: QuotaStore;
  let other: Database.Database;
  const clock = new ManualClock(T0);

  beforeEach(async () => {
    clock.set(T0);
    dir = tempDir();
    const path = join(dir.dir, 'quota.db');
    store = await openStore(`sqlite:${path}`);
    other = new Database(path);
  });

  afterEach(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await store.close();
    dir.remove();
  });

  // Another writer (a CLI command, a migration) holds the write lock while the clock moves `heldMs`.
  async function whileLocked<T>(heldMs: number, call: () => Promise<T>): Promise<{ answer: Promise<T> }> {
    other.exec('BEGIN IMMEDIATE');
    const answer = call();
    answer.catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 30));
    clock.advance(heldMs);
    other.exec('COMMIT');
    return { answer };
  }

  it('an admission that waited 1.5 s has its lease from when it was applied; the sweep leaves it be and the slot stays taken', async () => {
    const plane = createPlane({ store, clock });
    await plane.setQuota('acme', ONE_SLOT, { newTenant: true });
    const admitted = await answerOf(whileLocked(1_500, () => plane.admit({ tenant: 'acme', run: 'r1', leaseMs: 1_000 })));
    expect(admitted).toMatchObject({ ok: true, run: 'r1', leaseExpiresAtMs: T0 + 1_500 + 1_000 });
    const run = await store.tenant('acme').runs({ limit: 10 });
    expect(run).toMatchObject([{ run: 'r1', admittedAtMs: T0 + 1_500, leaseExpiresAtMs: T0 + 2_500 }]);
    expect(await plane.sweep({})).toMatchObject({ swept: [] });
    const second = await plane.admit({ tenant: 'acme', run: 'r2', leaseMs: 1_000 });
    expect(second).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
  });

  it('heartbeats, dispatches, resumes and settles that waited record the instant they were applied', async () => {
    const plane = createPlane({ store, clock });
    expect(await plane.admit({ tenant: 'acme', run: 'r1', leaseMs: 1_000 })).toMatchObject({ leaseExpiresAtMs: T0 + 1_000 });
    const renewed = await answerOf(whileLocked(800, () => plane.heartbeat({ tenant: 'acme', run: 'r1', epoch: 1, leaseMs: 1_000 })));
    expect(renewed).toEqual({ ok: true, run: 'r1', epoch: 1, leaseExpiresAtMs: T0 + 1_800 });
    const dispatched = await answerOf(whileLocked(800, () =>
      plane.dispatch({ tenant: 'acme', run: 'r1', epoch: 1, leaseMs: 1_000, grant: 'tool://mail/send', dispatch: 'd1' }),
    ));
    expect(dispatched).toEqual({ ok: true });
    expect((await store.tenant('acme').runs({ limit: 10 }))[0]?.leaseExpiresAtMs).toBe(T0 + 2_600);
    const settled = await answerOf(whileLocked(800, () =>
      plane.settle({ tenant: 'acme', run: 'r1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: false }),
    ));
    expect(settled.ok).toBe(true);
    expect((await store.tenant('acme').runs({ limit: 10 }))[0]).toMatchObject({ status: 'paused', statusSinceMs: T0 + 2_400 });
    const resumed = await answerOf(whileLocked(800, () => plane.resume({ tenant: 'acme', run: 'r1', leaseMs: 1_000 })));
    expect(resumed).toMatchObject({ ok: true, epoch: 2, leaseExpiresAtMs: T0 + 3_200 + 1_000 });
  });

  it('a waiter granted by a settle that waited gets its lease from when the grant was applied', async () => {
    const plane = createPlane({ store, clock });
    await plane.setQuota('acme', ONE_SLOT, { newTenant: true });
    await plane.admit({ tenant: 'acme', run: 'r1' });
    const waiting = plane.admit({ tenant: 'acme', run: 'r2', leaseMs: 1_000, waitMs: 60_000 });
    await until(async () => (await store.tenant('acme').waitQueue({ atMs: clock.nowMs() })).depth === 1, 'r2 waits');
    await answerOf(whileLocked(1_500, () =>
      plane.settle({ tenant: 'acme', run: 'r1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true }),
    ));
    expect(await waiting).toMatchObject({ ok: true, run: 'r2', leaseExpiresAtMs: T0 + 1_500 + 1_000 });
  });

  it('a waiter granted by a sweep that waited is admitted when the sweep was applied', async () => {
    const plane = createPlane({ store, clock });
    await plane.setQuota('acme', ONE_SLOT, { newTenant: true });
    await plane.admit({ tenant: 'acme', run: 'r1', leaseMs: 1_000 });
    const acme = store.tenant('acme');
    const r2 = { run: 'r2', budget: {}, width: 1, atMs: T0, leaseMs: 1_000 };
    expect(await acme.admitOrWait(r2, { untilMs: T0 + 60_000, leaseMs: 10_000 })).toMatchObject({ waiting: true });
    clock.advance(1_000);
    // r1's lease has lapsed; the sweep reads now, then waits 1.5 s for the write lock to free r1's slot.
    await answerOf(whileLocked(1_500, () => plane.sweep({ tenant: 'acme' })));
    expect(await acme.runs({ limit: 10 })).toMatchObject([
      { run: 'r1', status: 'stranded' },
      { run: 'r2', status: 'running', admittedAtMs: T0 + 2_500, leaseExpiresAtMs: T0 + 3_500 },
    ]);
  });

  it('a decision that waited longer than maxDecisionWaitMs is STORE_UNAVAILABLE and holds nothing', async () => {
    const plane = createPlane({ store, clock, maxDecisionWaitMs: 1_000 });
    await plane.setQuota('acme', ONE_SLOT, { newTenant: true });
    const { answer: late } = await whileLocked(1_500, () => plane.admit({ tenant: 'acme', run: 'r1', leaseMs: 1_000 }));
    const error = await failure(late);
    expect(error.code).toBe('STORE_UNAVAILABLE');
    expect(error.details).toMatchObject({ reason: 'waited-too-long', waitedMs: 1_500, maxWaitMs: 1_000 });
    expect(error.message).toContain('nothing is held');
    const acme = store.tenant('acme');
    expect(await acme.running()).toBe(0);
    expect(await acme.getRun('r1')).toBeNull();
    expect(await plane.admit({ tenant: 'acme', run: 'r2' })).toMatchObject({ ok: true, leaseExpiresAtMs: T0 + 1_500 + 60_000 });
  });

  it('maxDecisionWaitMs is validated by name', () => {
    expect(() => createPlane({ store, maxDecisionWaitMs: -1 })).toThrow(/maxDecisionWaitMs/);
  });
});

describeOn('postgres', 'PostgreSQL: a decision waiting for another transaction’s tenant lock is recorded when it is applied', () => {
  let opened: SchemaStore;

  beforeEach(async () => {
    opened = await openSchemaStore('applied_instant');
  });

  afterEach(async () => {
    await closeSchemaStore(opened);
  });

  // Another transaction holds the tenant's admission lock (as a batch of another instance does)
  // for at least `heldMs` of real time after `call` is blocked on it.
  async function whileTenantLocked<T>(tenant: string, heldMs: number, call: () => Promise<T>): Promise<{ answer: Promise<T> }> {
    const { admin, schema } = opened;
    await admin.query('BEGIN');
    await admin.query(`SELECT "${schema}".quota_admission_lock($1)`, [tenant]);
    const answer = call();
    answer.catch(() => undefined);
    await until(async () => {
      const { rows } = await admin.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))',
      );
      return rows[0]?.n === 1;
    }, 'the decision waits for the tenant lock');
    await new Promise((resolve) => setTimeout(resolve, heldMs));
    await admin.query('COMMIT');
    return { answer };
  }

  it('an admission that waited 1.5 s has its lease from when it was applied; the sweep leaves it be and the slot stays taken', async () => {
    const plane: Plane = createPlane({ store: opened.store });
    await plane.setQuota('ai-acme', ONE_SLOT, { newTenant: true });
    const askedAtMs = Date.now();
    const admitted = await answerOf(whileTenantLocked('ai-acme', 1_500, () => plane.admit({ tenant: 'ai-acme', run: 'r1', leaseMs: 1_000 })));
    const answeredAtMs = Date.now();
    expect(admitted.ok).toBe(true);
    if (!admitted.ok) return;
    // Applied once the lock was given up, at least 1.5 s after it was asked: its lease runs from then.
    expect(admitted.leaseExpiresAtMs).toBeGreaterThanOrEqual(askedAtMs + 1_500 + 1_000);
    expect(admitted.leaseExpiresAtMs).toBeGreaterThan(answeredAtMs);
    expect(await plane.sweep({ atMs: answeredAtMs })).toMatchObject({ swept: [] });
    expect(await plane.admit({ tenant: 'ai-acme', run: 'r2', leaseMs: 1_000 })).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
  });

  it('a heartbeat that waited renews from when it was applied', async () => {
    const plane: Plane = createPlane({ store: opened.store });
    const admitted = await plane.admit({ tenant: 'ai-beta', run: 'r1', leaseMs: 1_000 });
    expect(admitted.ok).toBe(true);
    const askedAtMs = Date.now();
    const renewed = await answerOf(whileTenantLocked('ai-beta', 1_500, () => plane.heartbeat({ tenant: 'ai-beta', run: 'r1', epoch: 1, leaseMs: 1_000 })));
    expect(renewed.ok).toBe(true);
    if (!renewed.ok) return;
    expect(renewed.leaseExpiresAtMs).toBeGreaterThanOrEqual(askedAtMs + 1_500 + 1_000);
  });

  it('a decision that waited longer than maxDecisionWaitMs is STORE_UNAVAILABLE and holds nothing', async () => {
    const plane: Plane = createPlane({ store: opened.store, maxDecisionWaitMs: 500 });
    await plane.setQuota('ai-gamma', ONE_SLOT, { newTenant: true });
    const { answer: late } = await whileTenantLocked('ai-gamma', 1_000, () => plane.admit({ tenant: 'ai-gamma', run: 'r1', leaseMs: 1_000 }));
    const error = await failure(late);
    expect(error.code).toBe('STORE_UNAVAILABLE');
    expect(error.details).toMatchObject({ reason: 'waited-too-long', maxWaitMs: 500 });
    expect(error.details.waitedMs).toBeGreaterThanOrEqual(1_000);
    const gamma = opened.store.tenant('ai-gamma');
    expect(await gamma.running()).toBe(0);
    expect(await gamma.getRun('r1')).toBeNull();
    expect(await plane.admit({ tenant: 'ai-gamma', run: 'r2' })).toMatchObject({ ok: true });
  });
});
