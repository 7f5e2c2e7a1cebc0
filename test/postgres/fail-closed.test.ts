import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { startEmbeddedServer, type EmbeddedServer } from './embedded-server.js';
import { until } from '../until.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';

// Fail closed (docs/design/decisions.md "Fail closed"): while the database is down, every
// admission, dispatch and settlement answers STORE_UNAVAILABLE and nothing is admitted on a guess;
// when the server is back, the very same store object answers again, without being reopened.
// This file stops and starts a server, so it has one of its own rather than the run's.

const T_MS = 1_760_000_000_000;
const GRANT = 'tool://payments/refund';
const CEILINGS = [{ count: 100, windowSeconds: 3600 }];
const BUDGET = { maxTokens: 1_000, maxCallTokens: 100 };

let server: EmbeddedServer;
let store: PostgresQuotaStore;

beforeAll(async () => {
  server = await startEmbeddedServer('fail-closed');
  store = await openPostgresStore(server.url, { busyTimeoutMs: 2_000, statementTimeoutMs: 3_000 });
});

afterAll(async () => {
  await store?.close().catch(() => undefined);
  await server?.dispose();
});

/** Resolves with the `QuotaError` `promise` rejected with; fails the test if it resolved. */
async function rejection(promise: Promise<unknown>): Promise<QuotaError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof QuotaError) return error;
    throw error;
  }
  throw new Error('expected a rejection, but the call answered');
}

describe('PostgreSQL fails closed and recovers', () => {
  it('refuses every admission, dispatch, reserve and settlement with STORE_UNAVAILABLE while the server is down, and the same store answers again once it is back', async () => {
    const acme = store.tenant('acme');
    const plane = createPlane({ store });
    await acme.setQuota(
      { period: 'monthly', maxConcurrentRuns: 10, maxTokensPerPeriod: 100_000 },
      { atMs: T_MS, by: { actor: 'ops', basis: 'asserted' }, action: 'quota.set', subject: 'quota', detail: {} },
    );
    const before = await acme.admit({ run: 'run-before', budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 60_000 });
    expect(before.ok).toBe(true);

    await server.stop();

    // Each call's rejection is taken at once, so none is ever an unhandled rejection while another is awaited.
    const calls: [string, Promise<unknown>][] = [
      ['admit', acme.admit({ run: 'run-during', budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 60_000 })],
      ['plane.admit', plane.admit({ tenant: 'acme', run: 'run-during-plane', budget: BUDGET, atMs: T_MS })],
      ['dispatch', acme.dispatch({ run: 'run-before', grant: GRANT, dispatch: 'd-1', ceilings: CEILINGS, exempt: false, atMs: T_MS })],
      ['settlePass', acme.settlePass({ run: 'run-before', epoch: 1, spend: { tokens: 10, minorUnits: 0 }, concludes: true, atMs: T_MS })],
      ['reserve', acme.reserve({ run: 'run-reserve', quota: { period: 'monthly', maxConcurrentRuns: 10 }, atMs: T_MS })],
      [
        'settle',
        acme.settle({ run: 'run-before', epoch: 1, period: '2025-10', spend: { tokens: 10, minorUnits: 0 }, releaseSlot: true, concludes: true }),
      ],
      ['reserveRate', acme.reserveRate({ grant: GRANT, run: 'run-before', dispatch: 'd-2', ceilings: CEILINGS, atMs: T_MS, exempt: false })],
      ['resume', acme.resume({ run: 'run-before', atMs: T_MS, leaseMs: 60_000 })],
      ['halts', acme.halts()],
    ];
    const down = calls.map(([operation, call]) => [operation, rejection(call)] as const);
    for (const [operation, pending] of down) {
      const error = await pending;
      expect({ operation, code: error.code, retryable: error.retryable }).toEqual({
        operation,
        code: 'STORE_UNAVAILABLE',
        retryable: true,
      });
      expect(error.cause, operation).toBeDefined();
    }

    await server.start();

    // The same store object, no reopen: the pool dropped its dead connections and opens new ones.
    expect(await acme.running()).toBe(1);
    expect(await acme.getRun('run-during')).toBeNull();
    expect(await acme.getRun('run-during-plane')).toBeNull();
    expect(await acme.runningRuns(10)).toEqual(['run-before']);
    expect(await acme.spent('2025-10')).toEqual({ tokens: 0, minorUnits: 0 });

    const after = await acme.admit({ run: 'run-after', budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 60_000 });
    expect(after).toMatchObject({ ok: true, run: 'run-after', epoch: 1 });
    expect(await acme.dispatch({ run: 'run-after', grant: GRANT, dispatch: 'd-3', ceilings: CEILINGS, exempt: false, atMs: T_MS })).toEqual({
      ok: true,
    });
    const settled = await acme.settlePass({ run: 'run-before', epoch: 1, spend: { tokens: 10, minorUnits: 0 }, concludes: true, atMs: T_MS });
    expect(settled.outcome).toBe('settled');
    expect(await acme.spent('2025-10')).toEqual({ tokens: 10, minorUnits: 0 });
    const viaPlane = await plane.admit({ tenant: 'acme', budget: BUDGET, atMs: T_MS });
    expect(viaPlane.ok).toBe(true);
  });

  it('a connection terminated mid-decision answers STORE_UNAVAILABLE, wrote nothing, and the next call gets a fresh connection', async () => {
    const globex = store.tenant('globex');
    const quota = { period: 'monthly', maxConcurrentRuns: 5 } as const;
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      // Hold globex's admission lock, so the store's admission waits inside its transaction.
      await admin.query('BEGIN');
      await admin.query('SELECT quotaplane.quota_admission_lock($1)', ['globex']);
      const waiting = rejection(globex.admit({ run: 'run-cut', budget: {}, width: 1, atMs: T_MS, leaseMs: 60_000, quota }));
      await until(async () => {
        const rows = await admin.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'quotaplane' AND wait_event_type = 'Lock'`,
        );
        return rows.rows[0]?.n === 1;
      }, "the store's admission waits for globex's lock", { everyMs: 20 });
      await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'quotaplane' AND wait_event_type = 'Lock'`,
      );
      const error = await waiting;
      expect({ code: error.code, sqlstate: error.details.code }).toEqual({ code: 'STORE_UNAVAILABLE', sqlstate: '57P01' });
      await admin.query('ROLLBACK');
    } finally {
      await admin.end();
    }
    expect(await globex.getRun('run-cut')).toBeNull();
    expect(await globex.admit({ run: 'run-next', budget: {}, width: 1, atMs: T_MS, leaseMs: 60_000, quota })).toMatchObject({ ok: true });
  });
});

describe('the books after the tests above', () => {
  it('every derived figure agrees with the rows it summarises once the server went down and came back, and a connection was cut mid-decision (books-agree.ts)', async () => {
    const differences = await booksDisagreements(server.url, 'quotaplane');
    expect(differences, describeDifferences(differences)).toEqual([]);
  });
});
