import { join } from 'node:path';

/*
 * Differential test of the two adapters: random sequences of admit, heartbeat, settlePass, resume,
 * dispatch, releaseRun, the sweep, the raw port settle and release, and waiting admissions are
 * driven into a SQLite store and a PostgreSQL store, each sequence on a tenant of its own, and
 * after every step the two answers (or faults: code and field) and the books as the port reads them
 * (running, spent, reserved, runs, holds, passes, queue, agent usage) must be equal. Then the
 * PostgreSQL books must agree with their rows (books-agree.ts). DIFF_RUNS sets the sequences per
 * case (defaults keep the file short; raise it to explore).
 */

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_INSTANT_MS } from '../../src/core/instant.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { tempDir } from '../plane/plane-fixtures.js';
import { booksDisagreements } from './books-agree.js';
import { applyLifecycle, booksProblems, driveAlike, lifecycleOps, type LifecycleOp } from './differential-steps.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';

let sqlite: QuotaStore;
let pg: QuotaStore;
let dir: { dir: string; remove(): void };
let url: string;
let schema: string;
let tenantNo = 0;

beforeAll(async () => {
  dir = tempDir();
  sqlite = await openStore(`sqlite:${join(dir.dir, 'q.db')}`);
  url = testPgUrl();
  schema = freshSchemaName('diff');
  pg = await openStore(url, { schema });
});

afterAll(async () => {
  await sqlite?.close();
  await pg?.close();
  await dropSchema(url, schema);
  dir?.remove();
});

const op = fc.oneof(...lifecycleOps);

async function drive(ops: LifecycleOp[], startMs: number, period: 'monthly' | 'daily' = 'monthly'): Promise<void> {
  tenantNo += 1;
  const name = `t${tenantNo}`;
  await driveAlike({ a: sqlite.tenant(name), b: pg.tenant(name), ops, startMs, period, apply: applyLifecycle });
}

describe('SQLite and PostgreSQL answer the same lifecycle sequences alike', () => {
  it('random sequences in an ordinary month', async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => { await drive(ops, Date.UTC(2026, 11, 1, 12)); }), {
      numRuns: Number(process.env.DIFF_RUNS ?? 40),
    });
    expect(booksProblems(await booksDisagreements(url, schema))).toEqual('');
  });

  it('random sequences across a month end, daily periods', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        await drive(ops, Date.UTC(2026, 11, 31, 23, 58), 'daily');
      }),
      { numRuns: Number(process.env.DIFF_RUNS ?? 25) },
    );
    expect(booksProblems(await booksDisagreements(url, schema))).toEqual('');
  });

  it('random sequences at the edge of time', async () => {
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 15 }), async (ops) => { await drive(ops, MAX_INSTANT_MS - 100_000); }), {
      numRuns: Number(process.env.DIFF_RUNS ?? 25),
    });
    expect(booksProblems(await booksDisagreements(url, schema))).toEqual('');
  });
});
