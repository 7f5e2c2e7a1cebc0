import fc from 'fast-check';

import { MAX_INSTANT_MS } from '../../src/core/instant.js';
import type { TenantStore } from '../../src/store/store.js';
import { describeDifferences, type BooksDifference } from './books-agree.js';

/*
 * The steps of the differential tests (differential-lifecycle.test.ts: one SQLite store against
 * one PostgreSQL store; kept-differential.test.ts: against three PostgreSQL instances keeping
 * rows): the random lifecycle sequences, how each step is sent to a tenant, the books compared
 * after it, and how a sequence is driven into two stores step by step.
 */

/** The operator the sequences act as. */
export const BY = { actor: 'diff', basis: 'asserted' } as const;

/** Every admission's budget: tokens and minor units bounded, per run and per call. */
export const BUDGET = { maxTokens: 500, maxCallTokens: 500, maxMinorUnits: 20, maxCallMinorUnits: 20 };

/** A step of the lifecycle sequences, `dt` ms after the one before. */
export type LifecycleOp =
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
  | { kind: 'sweepWaiters'; dt: number };

/** A run number: mostly 1 or 2, sometimes up to 4. */
export const run = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 2 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 4 }) });
/** The ms from one step to the next: none, a little, much, or back in time. */
export const dt = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 50_000, max: 200_000 }), fc.integer({ min: -3_000, max: -1 }));
export const lease = fc.oneof(fc.constant(1), fc.integer({ min: 1_000, max: 120_000 }), fc.constant(86_400_000));
export const epoch = fc.oneof(fc.constant(1), fc.constant(2), fc.integer({ min: 0, max: 4 }));
/** The lifecycle steps, weighted, for `fc.oneof`. */
export const lifecycleOps = [
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
] as const;

// An answer or a failure, as comparable data.
export async function answer(call: () => Promise<unknown>): Promise<unknown> {
  try {
    const value = await call();
    return strip(value);
  } catch (error) {
    const e = error as { code?: string; details?: { field?: string }; message?: string };
    return { threw: e.code ?? 'plain', field: e.details?.field, message: e.code === undefined ? e.message : undefined };
  }
}

export function strip(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null, (key, v) => (key === 'hash' || key === 'seq' ? undefined : v)));
}

/** Sends one lifecycle step to `t` at `atMs`; answers what it answered (or how it failed) as data. */
export async function applyLifecycle(t: TenantStore, o: LifecycleOp, atMs: number): Promise<unknown> {
  const r = `r${'run' in o ? o.run : 0}`;
  switch (o.kind) {
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

/** The tenant's books as the port reads them, at `atMsNow`, for `period` (a day). */
export async function booksAsRead(t: TenantStore, period: string, atMsNow: number): Promise<unknown> {
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

// The books' disagreements, less one the sequences provoke by design: the raw port `settle` takes a
// receipt for a (run, epoch) no admission has registered yet, and counts it for no agent; an
// admission of that run id afterwards gives the receipt an agent the agent's figures never saw, so
// books-agree's "an agent's total is the sum over its runs' receipts" does not hold (both stores
// agree on it: agentUsage is compared above).
export function booksProblems(differences: BooksDifference[]): string {
  return describeDifferences(differences.filter((d) => d.figure !== 'agentSettledFromReceipts'));
}

/**
 * Drives `ops` into tenant `name` of two stores, from `startMs` on, under the same quota: each step
 * to `a` and to `bAt(index)` (a store of the other side, which may change from step to step), then
 * the answers and the books as `a` and `b` read them must be equal. Throws at the first difference,
 * naming the steps that led to it.
 */
export async function driveAlike<O extends { readonly dt: number }>(options: {
  readonly a: TenantStore;
  readonly b: TenantStore;
  readonly bAt?: (index: number) => TenantStore;
  readonly ops: readonly O[];
  readonly startMs: number;
  readonly period: 'monthly' | 'daily';
  readonly apply: (t: TenantStore, o: O, atMs: number) => Promise<unknown>;
}): Promise<void> {
  const { a, b, ops, startMs, period, apply } = options;
  const quota = { period, maxConcurrentRuns: 3, maxTokensPerPeriod: 6_000, maxMinorUnitsPerPeriod: 300, agents: { bot: { maxConcurrentRuns: 2 } } } as const;
  await a.setQuota(quota, { atMs: startMs, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
  await b.setQuota(quota, { atMs: startMs, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
  let atMs = startMs;
  for (const [index, o] of ops.entries()) {
    atMs = Math.min(MAX_INSTANT_MS, Math.max(0, atMs + o.dt));
    const x = await apply(a, o, atMs);
    const y = await apply(options.bAt?.(index) ?? b, o, atMs);
    const day = new Date(atMs).toISOString().slice(0, 10);
    const sx = await booksAsRead(a, day, atMs);
    const sy = await booksAsRead(b, day, atMs);
    if (JSON.stringify([x, sx]) !== JSON.stringify([y, sy])) {
      throw new Error(`differ at ${JSON.stringify(o)} atMs=${atMs}\nsqlite=${JSON.stringify(x)}\n  ${JSON.stringify(sx)}\npg=${JSON.stringify(y)}\n  ${JSON.stringify(sy)}\nsteps=${JSON.stringify(ops.slice(0, index + 1))}`);
    }
  }
}
