import { join } from 'node:path';

/*
 * The differential test of differential-lifecycle.test.ts, with the PostgreSQL side spread over
 * three store instances on one schema, each deciding on the rows it kept from its last batch of
 * the tenant (postgres-books-cache.ts): every step goes to a random instance, and operator acts
 * (halts of every scope, quota changes) are mixed in, so kept rows are stale at random. The
 * answers and the books must stay those of one SQLite store.
 */

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_INSTANT_MS } from '../../src/core/instant.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import { tempDir } from '../plane/plane-fixtures.js';
import { booksDisagreements } from './books-agree.js';
import { answer, applyLifecycle, booksProblems, BY, driveAlike, dt, lifecycleOps, run, type LifecycleOp } from './differential-steps.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';

let sqlite: QuotaStore;
let pg: QuotaStore;
let pgs: QuotaStore[] = [];
let dir: { dir: string; remove(): void };
let url: string;
let schema: string;
let tenantNo = 0;

beforeAll(async () => {
  dir = tempDir();
  sqlite = await openStore(`sqlite:${join(dir.dir, 'q.db')}`);
  url = testPgUrl();
  schema = freshSchemaName('kept_diff');
  pg = await openStore(url, { schema });
  pgs = [pg, await openStore(url, { schema }), await openStore(url, { schema })];
});

afterAll(async () => {
  await sqlite?.close();
  for (const store of pgs) await store.close();
  await dropSchema(url, schema);
  dir?.remove();
});

/** The lifecycle steps, and the operator acts and port calls that make kept rows stale. */
type Op =
  | LifecycleOp
  | { kind: 'halt'; scope: number; dt: number }
  | { kind: 'lift'; scope: number; dt: number }
  | { kind: 'quota'; max: number; dt: number }
  | { kind: 'portReserve'; run: number; tokens: number; dt: number }
  | { kind: 'portCarry'; run: number; next: boolean; dt: number };

const SCOPES = [
  { kind: 'tenant' },
  { kind: 'agent', name: 'bot' },
  { kind: 'revision', digest: 'ab'.repeat(32) },
  { kind: 'subject', principal: 'user:alice' },
] as const;

const op: fc.Arbitrary<Op> = fc.oneof(
  ...lifecycleOps,
  fc.record({ kind: fc.constant('halt' as const), scope: fc.integer({ min: 0, max: 3 }), dt }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('lift' as const), scope: fc.integer({ min: 0, max: 3 }), dt }) },
  fc.record({ kind: fc.constant('quota' as const), max: fc.integer({ min: 0, max: 4 }), dt }),
  fc.record({ kind: fc.constant('portReserve' as const), run, tokens: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3_000 })), dt }),
  fc.record({ kind: fc.constant('portCarry' as const), run, next: fc.boolean(), dt }),
);
// A step and the PostgreSQL instance (0 to 2) it goes to.
const step = fc.tuple(op, fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 2 })));

async function apply(t: TenantStore, o: Op, atMs: number, period: 'monthly' | 'daily'): Promise<unknown> {
  const r = `r${'run' in o ? o.run : 0}`;
  switch (o.kind) {
    case 'portReserve': {
      const month = new Date(atMs).toISOString().slice(0, 7);
      const quota = { period: 'monthly', maxConcurrentRuns: 3, maxTokensPerPeriod: 6_000 } as const;
      return answer(() => t.reserve({ run: r, quota, hold: o.tokens === 0 ? null : { period: month, amount: { tokens: o.tokens, minorUnits: 0 } }, atMs }));
    }
    case 'portCarry': {
      const at = new Date(atMs);
      const month = o.next ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)).toISOString().slice(0, 7) : at.toISOString().slice(0, 7);
      return answer(() => t.carry(r, month));
    }
    case 'halt':
      return answer(() => t.setHalt({ scope: SCOPES[o.scope] as never, reason: 'test', by: BY, atMs }));
    case 'lift':
      return answer(() => t.liftHalt(SCOPES[o.scope] as never));
    case 'quota':
      return answer(() =>
        t.setQuota(
          { period, maxConcurrentRuns: o.max, maxTokensPerPeriod: 6_000, maxMinorUnitsPerPeriod: 300, agents: { bot: { maxConcurrentRuns: 2 } } },
          { atMs, by: BY, action: 'quota.set', subject: 'quota', detail: {} },
        ),
      );
    default:
      return applyLifecycle(t, o, atMs);
  }
}

async function drive(steps: [Op, number][], startMs: number, period: 'monthly' | 'daily' = 'monthly'): Promise<void> {
  tenantNo += 1;
  const name = `t${tenantNo}`;
  await driveAlike({
    a: sqlite.tenant(name),
    b: pg.tenant(name),
    bAt: (index) => (pgs[(steps[index] as [Op, number])[1]] as QuotaStore).tenant(name),
    ops: steps.map(([o]) => o),
    startMs,
    period,
    apply: (t, o, atMs) => apply(t, o, atMs, period),
  });
}

describe('SQLite and three PostgreSQL instances keeping rows answer the same sequences alike', () => {
  it('random sequences in an ordinary month', async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (ops) => { await drive(ops, Date.UTC(2026, 11, 1, 12)); }), {
      numRuns: Number(process.env.DIFF_RUNS ?? 40),
    });
    expect(booksProblems(await booksDisagreements(url, schema))).toEqual('');
  });

  it('random sequences across a month end, daily periods', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (ops) => {
        await drive(ops, Date.UTC(2026, 11, 31, 23, 58), 'daily');
      }),
      { numRuns: Number(process.env.DIFF_RUNS ?? 25) },
    );
    expect(booksProblems(await booksDisagreements(url, schema))).toEqual('');
  });

  it('random sequences at the edge of time', async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 15 }), async (ops) => { await drive(ops, MAX_INSTANT_MS - 100_000); }), {
      numRuns: Number(process.env.DIFF_RUNS ?? 25),
    });
    expect(booksProblems(await booksDisagreements(url, schema))).toEqual('');
  });
});
