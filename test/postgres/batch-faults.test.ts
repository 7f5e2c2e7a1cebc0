import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { until } from '../until.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';
import { closeSchemaStore, openSchemaStore } from './pg-test-support.js';

// Faults inside one batch of decisions (docs/design/decisions.md "Group commit"), each on a real
// server: a decision that trips lock_timeout or raises a domain violation is rolled back alone and
// its caller alone hears it; a statement_timeout or a terminated backend fails the whole batch, and
// then none of it is on the books. After each, the books agree (books-agree.ts).

const T_MS = Date.UTC(2026, 11, 1, 12);
const BY = { actor: 'batch-faults', basis: 'asserted' } as const;
const MAX = Number.MAX_SAFE_INTEGER;

let url: string;
let schema: string;
let store: PostgresQuotaStore;
let admin: pg.Client;

beforeAll(async () => {
  // Two pooled connections, one lane: the calls of one tick travel in one batch.
  ({ url, schema, store, admin } = await openSchemaStore('batch_faults', { poolSize: 2, busyTimeoutMs: 300, statementTimeoutMs: 1_500 }));
  // Test-only: the pass of a run id ending in '-slow' takes 3 s to write, past the statement_timeout.
  await admin.query(`
    CREATE FUNCTION "${schema}".fault_probe_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NEW.run_id LIKE '%-slow' THEN PERFORM pg_sleep(3); END IF;
      RETURN NEW;
    END $fn$;
    CREATE TRIGGER fault_probe BEFORE INSERT ON "${schema}".quota_passes FOR EACH ROW EXECUTE FUNCTION "${schema}".fault_probe_row();
  `);
});

afterAll(async () => {
  await closeSchemaStore({ url, schema, store, admin });
});

async function booksAgree(): Promise<void> {
  const differences = await booksDisagreements(url, schema);
  expect(differences, describeDifferences(differences)).toEqual([]);
}

async function tenantWithRuns(tenant: string, runs: readonly string[]): Promise<void> {
  const t = store.tenant(tenant);
  await t.setQuota({ period: 'monthly', maxConcurrentRuns: 20, maxTokensPerPeriod: MAX }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
  for (const run of runs) {
    expect((await t.admit({ run, budget: { maxTokens: 100, maxCallTokens: 100 }, width: 1, atMs: T_MS, leaseMs: 600_000 })).ok).toBe(true);
  }
}

/** What each call answered: its outcome, or its error code. */
function settled(calls: Promise<unknown>[]): Promise<unknown[]> {
  return Promise.all(calls.map((call) => call.then((value) => value, (error: { code?: string }) => `error ${error.code ?? String(error)}`)));
}

async function passes(tenant: string): Promise<string[]> {
  const { rows } = await admin.query<{ run_id: string }>(`SELECT run_id FROM "${schema}".quota_passes WHERE tenant = $1 ORDER BY run_id`, [tenant]);
  return rows.map((row) => row.run_id);
}

describe('faults inside one batch', () => {
  it('a decision that trips lock_timeout on a run row held elsewhere fails alone; the rest of its batch commits', async () => {
    await tenantWithRuns('bf-lock', ['a', 'b', 'c']);
    const t = store.tenant('bf-lock');
    await admin.query('BEGIN');
    await admin.query(`SELECT 1 FROM "${schema}".quota_runs WHERE tenant = 'bf-lock' AND run_id = 'b' FOR UPDATE`);
    const answers = await settled([
      t.settlePass({ run: 'a', epoch: 1, spend: { tokens: 10, minorUnits: 0 }, concludes: true, atMs: T_MS + 1 }).then((s) => s.outcome),
      t.settlePass({ run: 'b', epoch: 1, spend: { tokens: 20, minorUnits: 0 }, concludes: true, atMs: T_MS + 1 }).then((s) => s.outcome),
      t.settlePass({ run: 'c', epoch: 1, spend: { tokens: 30, minorUnits: 0 }, concludes: true, atMs: T_MS + 1 }).then((s) => s.outcome),
    ]);
    await admin.query('ROLLBACK');
    expect(answers).toEqual(['settled', 'error STORE_UNAVAILABLE', 'settled']);
    expect(await t.spent('2026-12')).toEqual({ tokens: 40, minorUnits: 0 });
    expect(await t.runningRuns(10)).toEqual(['b']);
    await booksAgree();
  });

  it('a decision that raises a domain violation (a settled total past 2^53 − 1, QP001) fails alone with INVALID_ARGUMENT; the rest of its batch commits', async () => {
    await tenantWithRuns('bf-overflow', ['a', 'b', 'c']);
    const t = store.tenant('bf-overflow');
    const answers = await settled([
      t.settlePass({ run: 'a', epoch: 1, spend: { tokens: MAX - 5, minorUnits: 0 }, concludes: true, atMs: T_MS + 1 }).then((s) => s.outcome),
      t.settlePass({ run: 'b', epoch: 1, spend: { tokens: 6, minorUnits: 0 }, concludes: true, atMs: T_MS + 1 }).then((s) => s.outcome),
      t.settlePass({ run: 'c', epoch: 1, spend: { tokens: 5, minorUnits: 0 }, concludes: false, atMs: T_MS + 1 }).then((s) => s.outcome),
    ]);
    expect(answers).toEqual(['settled', 'error INVALID_ARGUMENT', 'settled']);
    expect(await t.spent('2026-12')).toEqual({ tokens: MAX, minorUnits: 0 });
    expect(await t.runningRuns(10)).toEqual(['b']);
    await booksAgree();
  });

  it('a batch cancelled by statement_timeout is on the books in no part, and every caller in it hears STORE_UNAVAILABLE', async () => {
    await tenantWithRuns('bf-timeout', ['a']);
    const t = store.tenant('bf-timeout');
    const request = (run: string) => ({ run, budget: { maxTokens: 100, maxCallTokens: 100 }, width: 1, atMs: T_MS + 2, leaseMs: 600_000 });
    const answers = await settled([
      t.admit(request('x1')).then((a) => a.ok),
      t.settlePass({ run: 'a', epoch: 1, spend: { tokens: 7, minorUnits: 0 }, concludes: true, atMs: T_MS + 2 }).then((s) => s.outcome),
      t.admit(request('x2-slow')).then((a) => a.ok),
      t.admit(request('x3')).then((a) => a.ok),
    ]);
    expect(answers).toEqual(['error STORE_UNAVAILABLE', 'error STORE_UNAVAILABLE', 'error STORE_UNAVAILABLE', 'error STORE_UNAVAILABLE']);
    expect(await passes('bf-timeout')).toEqual(['a']);
    expect(await t.spent('2026-12')).toEqual({ tokens: 0, minorUnits: 0 });
    expect(await t.runningRuns(10)).toEqual(['a']);
    await booksAgree();
  });

  it('a batch whose backend is terminated mid-batch is on the books in no part, and every caller in it hears STORE_UNAVAILABLE', async () => {
    await tenantWithRuns('bf-kill', ['a']);
    const t = store.tenant('bf-kill');
    const request = (run: string) => ({ run, budget: { maxTokens: 100, maxCallTokens: 100 }, width: 1, atMs: T_MS + 3, leaseMs: 600_000 });
    const calls = settled([
      t.admit(request('y1')).then((a) => a.ok),
      t.settlePass({ run: 'a', epoch: 1, spend: { tokens: 9, minorUnits: 0 }, concludes: true, atMs: T_MS + 3 }).then((s) => s.outcome),
      t.admit(request('y2-slow')).then((a) => a.ok),
    ]);
    // The batch is asleep in y2-slow's pass, after y1 and the settle ran in it.
    await until(async () => {
      const { rows } = await admin.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'quotaplane' AND wait_event = 'PgSleep' AND position($1 in query) > 0`,
        [schema],
      );
      return rows[0]?.n === 1;
    }, 'the batch sleeps in its third decision', { everyMs: 10 });
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'quotaplane' AND wait_event = 'PgSleep' AND position($1 in query) > 0`,
      [schema],
    );
    expect(await calls).toEqual(['error STORE_UNAVAILABLE', 'error STORE_UNAVAILABLE', 'error STORE_UNAVAILABLE']);
    expect(await passes('bf-kill')).toEqual(['a']);
    expect(await t.spent('2026-12')).toEqual({ tokens: 0, minorUnits: 0 });
    expect(await t.runningRuns(10)).toEqual(['a']);
    await booksAgree();
  });

});
