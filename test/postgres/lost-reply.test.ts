import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { AdmitResult, Plane } from '../../src/plane/plane.js';
import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { until } from '../until.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';
import { startEmbeddedServer, type EmbeddedServer } from './embedded-server.js';

// A decision whose reply never came (postgres-errors.ts decisionFault): every process of a server
// of this file's own is frozen (SIGSTOP) just as the batch carrying an admission and a settle sends
// its write, for longer than the client's query timeout (statement timeout + 2 s). Both calls fail
// with STORE_UNAVAILABLE, yet the server commits both once it is thawed. So the fault must say the outcome is unknown, never
// "nothing was decided", and the retries the message asks for are answered from the books: the
// admission is told its pass (no second slot), the settle that it was settled already.
// This file freezes its server, so it cannot be the suite's shared one.

const STATEMENT_TIMEOUT_MS = 1_000;
// Longer than the client's query timeout (statement timeout + 2 s), so the client gives up first.
const FREEZE_MS = 5_000;
const BUDGET = { maxTokens: 1_000, maxCallTokens: 100 };
const SPEND = { tokens: 40, minorUnits: 0 };

let server: EmbeddedServer;
let store: PostgresQuotaStore;
let plane: Plane;
let frozen: number[] = [];

beforeAll(async () => {
  server = await startEmbeddedServer('lost-reply');
  store = await openPostgresStore(server.url, { statementTimeoutMs: STATEMENT_TIMEOUT_MS, busyTimeoutMs: 1_000 });
  plane = createPlane({ store, leaseMs: 600_000 });
}, 120_000);

afterAll(async () => {
  thaw();
  await store?.close().catch(() => undefined);
  await server?.dispose();
});

// The postmaster and every backend (a frozen postmaster alone would leave open connections answering).
function serverPids(): number[] {
  const postmaster = Number.parseInt(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0] ?? '', 10);
  const children = execFileSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' }).trim().split('\n').filter((line) => line !== '').map(Number);
  return [postmaster, ...children];
}

function freeze(): void {
  frozen = serverPids();
  for (const pid of frozen) process.kill(pid, 'SIGSTOP');
}

function thaw(): void {
  for (const pid of frozen.splice(0)) {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Already gone.
    }
  }
}

/** The `QuotaError` `promise` rejected with; fails the test if it answered. */
async function rejection(promise: Promise<unknown>): Promise<QuotaError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof QuotaError) return error;
    throw error;
  }
  throw new Error('expected a rejection, but the call answered');
}

function granted(result: AdmitResult): Extract<AdmitResult, { ok: true }> {
  if (!result.ok) throw new Error(`expected a grant, got ${result.refusal.code}`);
  return result;
}

describe('PostgreSQL: a decision whose reply never came', () => {
  it('is STORE_UNAVAILABLE with an unknown outcome (not "nothing was decided"); once the server commits it, retries are answered from the books: the admission is told its pass, the settle is already-settled', async () => {
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 3, maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
    const before = granted(await plane.admit({ tenant: 'acme', run: 'settled-in-freeze', budget: BUDGET }));

    // The server is frozen the moment the store sends the batch's write (below): the statement
    // that commits it, alone on kept rows or with its transaction's COMMIT.
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
      if (typeof text === 'string' && text.includes('quota_books_write')) {
        pg.Client.prototype.query = query;
        freeze();
      }
      return (query as (...given: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    let admission: QuotaError;
    let unnamed: QuotaError;
    let settle: QuotaError;
    try {
      // One tick, one tenant: the three decisions travel in one batch, sent to a frozen backend.
      const calls = [
        rejection(plane.admit({ tenant: 'acme', run: 'admitted-in-freeze', budget: BUDGET })),
        rejection(plane.admit({ tenant: 'acme', budget: BUDGET })),
        rejection(plane.settle({ tenant: 'acme', run: before.run, epoch: before.epoch, spend: SPEND, concludes: true })),
      ];
      [admission, unnamed, settle] = (await Promise.all(calls)) as [QuotaError, QuotaError, QuotaError];
    } finally {
      pg.Client.prototype.query = query;
      await new Promise((resolve) => setTimeout(resolve, FREEZE_MS - 3_000));
      thaw();
    }

    for (const fault of [admission, unnamed, settle]) {
      expect(fault.code).toBe('STORE_UNAVAILABLE');
      expect(fault.details).toMatchObject({ backend: 'postgres', step: 'commit', outcome: 'unknown' });
      expect(fault.message).not.toMatch(/nothing was decided/);
      expect(fault.message).toMatch(/retry the same call with the same payload .* and the books answer it/);
    }
    // Each admission names the run to retry under, also the one whose id the plane made.
    const unnamedRun = unnamed.details.run;
    expect(typeof unnamedRun).toBe('string');
    expect(unnamed.message).toContain(`this admission's run id is '${String(unnamedRun)}'`);
    expect(admission.details.run).toBe('admitted-in-freeze');
    expect(settle.details.run).toBeUndefined();

    // The thawed server runs the statement it had been sent, and commits it.
    const acme = store.tenant('acme');
    await until(async () => (await acme.getRun('admitted-in-freeze')) !== null, 'the frozen batch commits after the thaw', { withinMs: 30_000, everyMs: 50 });
    expect((await acme.getRun('admitted-in-freeze'))?.status).toBe('running');
    expect((await acme.getRun(String(unnamedRun)))?.status).toBe('running');
    expect((await acme.runningRuns(10)).sort()).toEqual(['admitted-in-freeze', String(unnamedRun)].sort());
    expect((await acme.reservations(10)).map((held) => held.run).sort()).toEqual(['admitted-in-freeze', String(unnamedRun)].sort());
    expect(await acme.spent(before.period)).toEqual(SPEND);

    // The retries the message asks for: answered from the books, no second slot, no second receipt.
    const retried = granted(await plane.admit({ tenant: 'acme', run: 'admitted-in-freeze', budget: BUDGET }));
    expect(retried).toMatchObject({ run: 'admitted-in-freeze', epoch: 1 });
    const retriedUnnamed = granted(await plane.admit({ tenant: 'acme', run: String(unnamedRun), budget: BUDGET }));
    expect(retriedUnnamed).toMatchObject({ run: unnamedRun, epoch: 1 });
    expect(await acme.running()).toBe(2);
    const settledAgain = await plane.settle({ tenant: 'acme', run: before.run, epoch: before.epoch, spend: SPEND, concludes: true });
    expect(settledAgain.outcome).toBe('already-settled');
    expect(await acme.spent(before.period)).toEqual(SPEND);

    const differences = await booksDisagreements(server.url, 'quotaplane');
    expect(differences, describeDifferences(differences)).toEqual([]);
  }, 90_000);

  it('a statement the server itself cancelled (statement_timeout, an ERROR it answered) still says nothing was decided', async () => {
    await plane.setQuota('slow', { period: 'monthly', maxConcurrentRuns: 3, maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      // Hold the tenant's admission lock past the statement timeout (but under the lock timeout's own
      // cancellation by the server): the server cancels the admission and answers with an ERROR.
      await admin.query('BEGIN');
      await admin.query('SELECT quotaplane.quota_admission_lock($1)', ['slow']);
      const fault = await rejection(plane.admit({ tenant: 'slow', run: 'cancelled', budget: BUDGET }));
      await admin.query('ROLLBACK');
      expect(fault.code).toBe('STORE_UNAVAILABLE');
      expect(fault.details.outcome).toBeUndefined();
      expect(fault.message).toMatch(/nothing was decided/);
    } finally {
      await admin.end();
    }
    expect(await store.tenant('slow').getRun('cancelled')).toBeNull();
  }, 30_000);
});
