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
import { booksDisagreements, describeDifferences, type BooksDifference } from './books-agree.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';

const BY = { actor: 'diff', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 500, maxCallTokens: 500, maxMinorUnits: 20, maxCallMinorUnits: 20 };

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

type Op =
  | { kind: 'admit'; run: number; width: number; dt: number; leaseMs: number }
  | { kind: 'heartbeat'; run: number; epoch: number; dt: number; leaseMs: number }
  | { kind: 'settle'; run: number; epoch: number; tokens: number; minorUnits: number; concludes: boolean; dt: number }
  | { kind: 'resume'; run: number; dt: number; leaseMs: number }
  | { kind: 'dispatch'; run: number; n: number; epoch: number | null; dt: number }
  | { kind: 'release'; run: number; dt: number }
  | { kind: 'sweep'; dt: number }
  | { kind: 'sweepRun'; run: number; dt: number }
  | { kind: 'portSettle'; run: number; epoch: number; tokens: number; releaseSlot: boolean; concludes: boolean; noPeriod: boolean; dt: number }
  | { kind: 'portRelease'; run: number; dt: number }
  | { kind: 'wait'; run: number; width: number; dt: number; untilDt: number; collect: boolean }
  | { kind: 'cancelWaiter'; run: number; dt: number }
  | { kind: 'sweepWaiters'; dt: number }
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

const run = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 2 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) });
const dt = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 50_000, max: 200_000 }), fc.integer({ min: -3_000, max: -1 }));
const lease = fc.oneof(fc.constant(1), fc.integer({ min: 1_000, max: 120_000 }), fc.constant(86_400_000));
const epoch = fc.oneof(fc.constant(1), fc.constant(2), fc.integer({ min: 0, max: 4 }));
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('admit' as const), run, width: fc.integer({ min: 1, max: 3 }), dt, leaseMs: lease }) },
  fc.record({ kind: fc.constant('admit' as const), run, width: fc.integer({ min: 1, max: 3 }), dt, leaseMs: lease }),
  fc.record({ kind: fc.constant('heartbeat' as const), run, epoch, dt, leaseMs: lease }),
  fc.record({
    kind: fc.constant('settle' as const), run, epoch,
    tokens: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 700 })),
    minorUnits: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 })),
    concludes: fc.boolean(), dt,
  }),
  fc.record({ kind: fc.constant('resume' as const), run, dt, leaseMs: lease }),
  fc.record({ kind: fc.constant('dispatch' as const), run, n: fc.integer({ min: 1, max: 1_000_000 }), epoch: fc.option(epoch, { nil: null }), dt }),
  fc.record({ kind: fc.constant('release' as const), run, dt }),
  fc.record({ kind: fc.constant('sweep' as const), dt }),
  fc.record({ kind: fc.constant('sweepRun' as const), run, dt }),
  fc.record({ kind: fc.constant('portSettle' as const), run, epoch, tokens: fc.integer({ min: 0, max: 700 }), releaseSlot: fc.boolean(), concludes: fc.boolean(), noPeriod: fc.boolean(), dt }),
  fc.record({ kind: fc.constant('portRelease' as const), run, dt }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('wait' as const), run, width: fc.integer({ min: 1, max: 3 }), dt, untilDt: fc.integer({ min: 0, max: 60_000 }), collect: fc.boolean() }) },
  fc.record({ kind: fc.constant('cancelWaiter' as const), run, dt }),
  fc.record({ kind: fc.constant('sweepWaiters' as const), dt }),
  fc.record({ kind: fc.constant('halt' as const), scope: fc.integer({ min: 0, max: 3 }), dt }),
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('lift' as const), scope: fc.integer({ min: 0, max: 3 }), dt }) },
  fc.record({ kind: fc.constant('quota' as const), max: fc.integer({ min: 0, max: 4 }), dt }),
  fc.record({ kind: fc.constant('portReserve' as const), run, tokens: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3_000 })), dt }),
  fc.record({ kind: fc.constant('portCarry' as const), run, next: fc.boolean(), dt }),
);
const step = fc.tuple(op, fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 2 })));

// An answer or a failure, as comparable data.
async function answer(call: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await call();
    return strip(value);
  } catch (error) {
    const e = error as { code?: string; details?: { field?: string }; message?: string };
    return { threw: e.code ?? 'plain', field: e.details?.field, message: e.code === undefined ? e.message : undefined };
  }
}

function strip(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null, (key, v) => (key === 'hash' || key === 'seq' ? undefined : v)));
}

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
    case 'admit':
      return answer(() => t.admit({ run: r, budget: BUDGET, width: o.width, atMs, leaseMs: o.leaseMs, agent: { name: 'bot', digest: 'ab'.repeat(32) } }));
    case 'heartbeat':
      return answer(() => t.heartbeat({ run: r, epoch: o.epoch, atMs, leaseMs: o.leaseMs }));
    case 'settle':
      return answer(() => t.settlePass({ run: r, epoch: o.epoch, spend: { tokens: o.tokens, minorUnits: o.minorUnits }, concludes: o.concludes, atMs }));
    case 'resume':
      return answer(() => t.resume({ run: r, atMs, leaseMs: o.leaseMs }));
    case 'dispatch':
      return answer(() =>
        t.dispatch({
          run: r, grant: 'tool://x/y', dispatch: `d${o.n}`, ceilings: [{ count: 3, windowSeconds: 60 }], exempt: false, atMs,
          ...(o.epoch === null ? {} : { epoch: o.epoch, leaseMs: 30_000 }),
        }),
      );
    case 'release':
      return answer(() => t.releaseRun({ run: r, atMs, by: BY }));
    case 'portSettle':
      return answer(() =>
        t.settle({ run: r, epoch: o.epoch, period: o.noPeriod ? null : new Date(atMs).toISOString().slice(0, 7), spend: { tokens: o.tokens, minorUnits: 0 }, releaseSlot: o.releaseSlot, concludes: o.concludes }),
      );
    case 'portRelease':
      return answer(() => t.release(r));
    case 'wait': {
      const request = { run: r, budget: BUDGET, width: o.width, atMs, leaseMs: 30_000, agent: { name: 'bot', digest: 'ab'.repeat(32) } };
      const terms = { untilMs: Math.min(MAX_INSTANT_MS, atMs + o.untilDt), leaseMs: 20_000 };
      return answer(() => (o.collect ? t.collectWaiter(request, terms) : t.admitOrWait(request, terms)));
    }
    case 'cancelWaiter':
      return answer(() => t.cancelWaiter({ run: r, atMs }));
    case 'sweepWaiters':
      return answer(() => t.sweepWaiters({ atMs }));
    case 'sweepRun':
      return answer(() => t.sweepRun({ run: r, atMs }));
    case 'sweep':
      return answer(async () => {
        const lapsed = await t.lapsedRuns({ atMs, limit: 100 });
        const out = [];
        for (const l of lapsed as unknown as { run: string }[]) out.push(await t.sweepRun({ run: typeof l === 'string' ? l : l.run, atMs }));
        return { lapsed, out };
      });
  }
}

async function state(t: TenantStore, period: string, atMsNow: number): Promise<unknown> {
  return {
    running: await answer(() => t.running()),
    spent: await answer(() => t.spent(period)),
    yesterday: await answer(() => t.spent(new Date(Math.max(0, atMsNow - 86_400_000)).toISOString().slice(0, 10))),
    reserved: await answer(() => t.reserved(period)),
    month: await answer(() => t.spent(period.slice(0, 7))),
    monthReserved: await answer(() => t.reserved(period.slice(0, 7))),
    runs: await answer(() => t.runs({ limit: 100 })),
    reservations: await answer(() => t.reservations(100)),
    idle: await answer(() => t.idleHolds({ idleSinceMs: MAX_INSTANT_MS, limit: 100 })),
    unsettled: await answer(() => t.unsettledPasses({ atMs: MAX_INSTANT_MS, limit: 100 })),
    overran: await answer(() => t.overranPasses({ limit: 100 })),
    queue: await answer(() => t.waitQueue({ atMs: Math.min(MAX_INSTANT_MS, atMsNow) })),
    agents: await answer(() => t.agentUsage!(['bot'], period.slice(0, 7))),
    r1: await answer(() => t.getRun('r1')),
    r2: await answer(() => t.getRun('r2')),
  };
}

async function drive(stepsIn: [Op, number][], startMs: number, periodKind: 'monthly' | 'daily' = 'monthly'): Promise<{ steps: unknown[] }> {
  tenantNo += 1;
  const name = `t${tenantNo}`;
  const a = sqlite.tenant(name);
  const b = pg.tenant(name);
  const ops = stepsIn.map(([o]) => o);
  const quota = { period: periodKind, maxConcurrentRuns: 3, maxTokensPerPeriod: 6_000, maxMinorUnitsPerPeriod: 300, agents: { bot: { maxConcurrentRuns: 2 } } } as const;
  await a.setQuota(quota, { atMs: startMs, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
  await b.setQuota(quota, { atMs: startMs, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
  let atMs = startMs;
  const steps: unknown[] = [];
  for (const [index, o] of ops.entries()) {
    atMs = Math.min(MAX_INSTANT_MS, Math.max(0, atMs + o.dt));
    const on = (pgs[(stepsIn[index] as [Op, number])[1]] as QuotaStore).tenant(name);
    const x = await apply(a, o, atMs, periodKind);
    const y = await apply(on, o, atMs, periodKind);
    const period = new Date(atMs).toISOString().slice(0, 10);
    const sx = await state(a, period, atMs);
    const sy = await state(b, period, atMs);
    steps.push({ o, atMs, x, y });
    if (JSON.stringify([x, sx]) !== JSON.stringify([y, sy])) {
      throw new Error(`differ at ${JSON.stringify(o)} atMs=${atMs}\nsqlite=${JSON.stringify(x)}\n  ${JSON.stringify(sx)}\npg=${JSON.stringify(y)}\n  ${JSON.stringify(sy)}\nsteps=${JSON.stringify(stepsIn.slice(0, index + 1))}`);
    }
  }
  return { steps };
}

// The books' disagreements, less one the sequences provoke by design: the raw port `settle` takes a
// receipt for a (run, epoch) no admission has registered yet, and counts it for no agent; an
// admission of that run id afterwards gives the receipt an agent the agent's figures never saw, so
// books-agree's "an agent's total is the sum over its runs' receipts" does not hold (both stores
// agree on it: agentUsage is compared above).
function booksProblems(differences: BooksDifference[]): string {
  return describeDifferences(differences.filter((d) => d.figure !== 'agentSettledFromReceipts'));
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
