import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { until } from '../until.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';
import { closeSchemaStore, openSchemaStore } from './pg-test-support.js';

// Two settles of one pass from two store instances (an operator's settlePass with `by`, and the
// port's settle with another payload) must never both write a receipt: every decision reads the
// books under the tenant's lock, so the second reads the first's receipt. Found by
// books-faults.test.ts when an operator's settle ran outside that lock: both wrote a receipt for
// one pass and the spend was booked twice.

const T_MS = Date.UTC(2026, 11, 1, 12);
// Tenant names of this file only: the admission lock keys are per database, not per schema, and
// other files run beside this one on the same server.
const BY = { actor: 'settle-test', basis: 'asserted' } as const;

let url: string;
let schema: string;
let store: PostgresQuotaStore;
let admin: pg.Client;

beforeAll(async () => {
  ({ url, schema, store, admin } = await openSchemaStore('settle_wait', { poolSize: 2 }));
});

afterAll(async () => {
  await closeSchemaStore({ url, schema, store, admin });
});

describe('a settle queued behind the run lock of another settle of the same pass', () => {
  it('C15 an operator’s settle and the port’s settle of one pass from two store instances: one receipt, one charge, the other CONFLICT', async () => {
    const acme = store.tenant('sw-acme');
    await acme.setQuota({ period: 'monthly', maxConcurrentRuns: 5 }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
    const admitted = await acme.admit({ run: 'r1', budget: { maxTokens: 500, maxCallTokens: 500 }, width: 1, atMs: T_MS, leaseMs: 60_000 });
    expect(admitted.ok).toBe(true);
    const other = await openPostgresStore(url, { schema });
    try {
      // The tenant's lock is held meanwhile, so both queue for it and are decided one after the other.
      await admin.query('BEGIN');
      await admin.query(`SELECT "${schema}".quota_admission_lock('sw-acme')`);
      const answer = (promise: Promise<unknown>) =>
        promise.then(
          () => 'settled',
          (error: { code?: string }) => error.code ?? String(error),
        );
      const own = answer(acme.settlePass({ run: 'r1', epoch: 1, spend: { tokens: 100, minorUnits: 0 }, concludes: false, atMs: T_MS + 1, by: BY }));
      const port = answer(
        other.tenant('sw-acme').settle({ run: 'r1', epoch: 1, period: '2026-12', spend: { tokens: 40, minorUnits: 0 }, releaseSlot: true, concludes: false }),
      );
      await until(async () => {
        const { rows } = await admin.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))`,
        );
        return rows[0]?.n === 2;
      }, 'both settles wait for the tenant', { everyMs: 10 });
      await admin.query('COMMIT');
      const outcomes = [await own, await port];
      expect([...outcomes].sort()).toEqual(['CONFLICT', 'settled']);
      const spent = await acme.spent('2026-12');
      expect(spent).toEqual({ tokens: outcomes[0] === 'settled' ? 100 : 40, minorUnits: 0 });
      const differences = await booksDisagreements(url, schema);
      expect(differences, describeDifferences(differences)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('an operator’s settle takes the tenant’s admission lock before the run row, as every batched decision does: no deadlock with a batch', async () => {
    const globex = store.tenant('sw-globex');
    await globex.setQuota({ period: 'monthly', maxConcurrentRuns: 1 }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
    const request = (run: string) => ({ run, budget: {}, width: 1, atMs: T_MS, leaseMs: 60_000 });
    expect((await globex.admit(request('g1'))).ok).toBe(true);
    // A waiter, so the slot the settle gives back is granted in the settle's transaction.
    expect(await globex.admitOrWait(request('g2'), { untilMs: T_MS + 60_000, leaseMs: 60_000 })).toMatchObject({ waiting: true });

    // A batch of globex's decisions holds the tenant's lock, as a batch takes it first.
    await admin.query('BEGIN');
    await admin.query(`SELECT "${schema}".quota_admission_lock('sw-globex')`);
    const settled = globex.settlePass({ run: 'g1', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: true, atMs: T_MS + 1, by: BY }).then(
      (answer) => answer.outcome,
      (error: { code?: string }) => error.code ?? String(error),
    );
    await until(async () => {
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))`,
      );
      return rows[0]?.n === 1;
    }, 'the operator settle waits for a lock', { everyMs: 10 });
    // The batch's next decision is about g1: it locks g1's run row. Taken in the other order, the
    // two transactions would wait for each other until PostgreSQL broke the deadlock.
    const locked = await admin.query(`SELECT 1 FROM "${schema}".quota_runs WHERE tenant = 'sw-globex' AND run_id = 'g1' FOR UPDATE`).then(
      () => 'locked',
      (error: { code?: string }) => error.code ?? String(error),
    );
    await admin.query(locked === 'locked' ? 'COMMIT' : 'ROLLBACK');
    expect({ locked, settled: await settled }).toEqual({ locked: 'locked', settled: 'settled' });
    expect(await globex.runningRuns(10)).toEqual(['g2']);
  });
});
