import { performance } from 'node:perf_hooks';

import type { Clock } from '../../core/clock.js';
import { addSpend, ZERO_SPEND, type Spend } from '../../core/spend.js';
import { createPlane } from '../../plane/create-plane.js';
import type { TenantStore } from '../../store/store.js';
import type { AdmitRequest, PassGrant } from '../../store/types.js';
import type { WaitOutcome, WaitTerms } from '../../store/waiters.js';
import { UsageError } from '../usage-error.js';
import { CompletionQueue, completionSettle, type PendingCompletion } from './completion-queue.js';
import type { ReplayProgress } from './replay-progress.js';
import { type TenantLedger } from './replay-invariants.js';
import { replayReport } from './replay-finish.js';
import {
  applyPlaneCeiling,
  budgetOf,
  LEASE_MARGIN_MS,
  newLedger,
  quotaOf,
  REPLAY_OPERATOR,
  RUN_BASE_MS,
  RUN_MS_PER_GENERATED_TOKEN,
  type ReplayTarget,
} from './replay-run.js';
import type { ReplayOptions, ReplayReport, TenantReport, WaitFigures } from './replay-types.js';
import { openTrace } from './trace-reader.js';
import { zipfSampler } from './zipf.js';

/** A row whose admission waits in its tenant's queue until a grant or its deadline (virtual ms). */
interface Waiter {
  readonly tenant: string;
  readonly request: AdmitRequest;
  readonly arrivalMs: number;
  readonly durationMs: number;
  readonly tokens: number;
  readonly minorUnits: number;
  readonly line: number;
  /** Orders the deadline queue: the instant the wait ends. */
  readonly endMs: number;
  done: boolean;
}

/** One tenant's waits, gathered while replaying. */
interface WaitBook {
  waited: number;
  granted: number;
  timedOut: number;
  readonly waitsMs: number[];
  /** The tenant's waiters still waiting, in the order they joined. */
  readonly queue: Waiter[];
}

/**
 * `replay --wait MS` (docs/design/rules.md#w1): the trace replayed as in `runReplay`, except that every
 * admission may wait up to `options.waitMs` virtual ms for a slot. The replay drives the store's
 * waiting verbs in the trace's virtual time (a real wait would stall a virtual clock): an arrival
 * refused only `TooManyRuns` joins its tenant's queue (`admitOrWait`); each settle at a run's end
 * grants the next waiters in its own transaction, and the replay collects those grants at once,
 * starting each granted request at that instant with its own duration; a waiter still waiting at
 * its deadline makes its final look then (a slot freed in that same instant is still its own) and
 * is otherwise refused `TooManyRuns`. Events at one instant run settles first, then deadlines,
 * then arrivals. Every call is awaited (no pipelining), and after each one the tenant's slot count
 * in the store is compared with the replay's own (`slotsHeldWhileRunning`).
 *
 * Needs a store: through a server (`--url`) it is a `UsageError`.
 */
export async function runWaitingReplay(options: ReplayOptions, target: ReplayTarget, progress: ReplayProgress | null): Promise<ReplayReport> {
  const store = target.store;
  if (store === undefined || target.remote !== undefined) {
    throw new UsageError("--wait replays waiting admissions in the trace's virtual time, which needs the store itself; drop --url");
  }
  const waitMs = options.waitMs ?? 0;
  const trace = await openTrace(options.tracePath);
  const rows = trace.rows[Symbol.asyncIterator]();
  let nowMs = 0;
  const clock: Clock = { nowMs: () => nowMs };
  const plane = createPlane({ store, clock });

  const width = String(options.tenants).length;
  const names = Array.from({ length: options.tenants }, (_, index) => `${target.tenantPrefix}tenant-${String(index + 1).padStart(width, '0')}`);
  const quota = quotaOf(options);
  let item = await rows.next().catch(async (error: unknown) => {
    await rows.return?.(undefined);
    throw error;
  });
  // The replay's tenants are its own, new by name: it says so (docs/design/rules.md#l95).
  for (const tenant of names) await plane.setQuota(tenant, quota, { by: REPLAY_OPERATOR, newTenant: true });
  await applyPlaneCeiling(plane, options);

  const ledgers = new Map<string, TenantLedger>(names.map((tenant) => [tenant, newLedger(tenant)]));
  const waits = new Map<string, WaitBook>(names.map((tenant) => [tenant, { waited: 0, granted: 0, timedOut: 0, waitsMs: [], queue: [] }]));
  const handles = new Map<string, TenantStore>(names.map((tenant) => [tenant, store.tenant(tenant)]));
  const ledger = (tenant: string) => ledgers.get(tenant) as TenantLedger;
  const waitBook = (tenant: string) => waits.get(tenant) as WaitBook;
  const handle = (tenant: string) => handles.get(tenant) as TenantStore;
  const pickTenant = zipfSampler({ count: options.tenants, exponent: options.zipfExponent, seed: options.seed });
  const running = new CompletionQueue<PendingCompletion>();
  const deadlines = new CompletionQueue<Waiter>();
  const settledRuns: PendingCompletion[] = [];
  const termsOf = (arrivalMs: number): WaitTerms => ({ untilMs: arrivalMs + waitMs, leaseMs: waitMs + 1 });

  // The store's slot count of `tenant` must equal the runs the replay started and has not settled.
  const check = async (tenant: string): Promise<void> => {
    const book = ledger(tenant);
    const slots = await handle(tenant).running();
    if (slots > book.peakRunning) book.peakRunning = slots;
    if (slots !== book.heldByReplay) book.runningMatchedHeld = false;
  };

  const start = (waiter: Omit<Waiter, 'endMs' | 'done' | 'request'>, pass: PassGrant, startMs: number): void => {
    const book = ledger(waiter.tenant);
    book.admitted += 1;
    book.heldByReplay += 1;
    book.periods.add(pass.period);
    if (book.heldByReplay > book.peakRunning) book.peakRunning = book.heldByReplay;
    running.push({
      tenant: waiter.tenant,
      run: pass.run,
      epoch: pass.epoch,
      period: pass.period,
      endMs: startMs + waiter.durationMs,
      tokens: waiter.tokens,
      minorUnits: waiter.minorUnits,
      line: waiter.line,
    });
  };

  // A waiter's answer once it no longer waits: started at `atMs`, or refused.
  const conclude = (waiter: Waiter, outcome: Exclude<WaitOutcome, { waiting: true }>, atMs: number): void => {
    waiter.done = true;
    const book = waitBook(waiter.tenant);
    const index = book.queue.indexOf(waiter);
    if (index >= 0) book.queue.splice(index, 1);
    if (outcome.ok) {
      book.granted += 1;
      book.waitsMs.push(atMs - waiter.arrivalMs);
      start(waiter, outcome, atMs);
    } else {
      if (outcome.refusal.code === 'TooManyRuns') book.timedOut += 1;
      ledger(waiter.tenant).refused[outcome.refusal.code] += 1;
    }
  };

  // After a settle freed a slot at `atMs`: collect the grants it wrote, head of the queue first.
  // The replay's runs have no agent, so grants follow each queue's order and the walk stops at the
  // first waiter still waiting.
  // Answers whether it collected anything.
  const collectGrants = async (tenant: string, atMs: number): Promise<boolean> => {
    const queue = waitBook(tenant).queue;
    if (queue.length === 0 || (await handle(tenant).waitQueue({ atMs })).uncollected === 0) return false;
    for (const waiter of [...queue]) {
      const outcome = await handle(tenant).collectWaiter({ ...waiter.request, atMs }, termsOf(waiter.arrivalMs));
      if (!outcome.ok && 'waiting' in outcome) break;
      conclude(waiter, outcome, atMs);
    }
    return true;
  };

  const settle = async (done: PendingCompletion): Promise<void> => {
    nowMs = done.endMs;
    const book = ledger(done.tenant);
    const result = await plane.settle(completionSettle(done));
    book.heldByReplay -= 1;
    if (result.outcome === 'settled') book.receiptsWritten += 1;
    book.settledByReplay.set(done.period, addSpend(book.settledByReplay.get(done.period) ?? ZERO_SPEND, { tokens: done.tokens, minorUnits: done.minorUnits }));
    settledRuns.push(done);
    // Under a plane-wide ceiling the freed slot may have gone to another tenant's waiter, in turn.
    const touched = new Set([done.tenant]);
    for (const [tenant, book] of waits) {
      if (book.queue.length > 0 && (await collectGrants(tenant, done.endMs))) touched.add(tenant);
    }
    for (const tenant of touched) await check(tenant);
  };

  const expire = async (waiter: Waiter): Promise<void> => {
    nowMs = waiter.endMs;
    const outcome = await handle(waiter.tenant).collectWaiter({ ...waiter.request, atMs: waiter.endMs }, termsOf(waiter.arrivalMs));
    if (!outcome.ok && 'waiting' in outcome) throw new Error(`line ${waiter.line} still waits after its deadline`);
    conclude(waiter, outcome, waiter.endMs);
    await check(waiter.tenant);
  };

  // Every settle and deadline at or before `untilMs`, in time order, settles first on a tie.
  const advance = async (untilMs: number): Promise<void> => {
    for (;;) {
      const completion = running.peek();
      let deadline = deadlines.peek();
      while (deadline?.done === true) {
        deadlines.pop();
        deadline = deadlines.peek();
      }
      const nextSettle = completion !== undefined && completion.endMs <= untilMs ? completion : undefined;
      const nextDeadline = deadline !== undefined && deadline.endMs <= untilMs ? deadline : undefined;
      if (nextSettle !== undefined && (nextDeadline === undefined || nextSettle.endMs <= nextDeadline.endMs)) {
        await settle(running.pop() as PendingCompletion);
      } else if (nextDeadline !== undefined) {
        await expire(deadlines.pop() as Waiter);
      } else {
        return;
      }
    }
  };

  let rowCount = 0;
  const started = performance.now();
  progress?.begin(trace.sizeBytes);
  try {
    for (; item.done !== true; item = await rows.next()) {
      const row = item.value;
      await advance(row.arrivalMs);
      nowMs = row.arrivalMs;
      rowCount += 1;
      const tenant = names[pickTenant()] as string;
      const durationMs = RUN_BASE_MS + RUN_MS_PER_GENERATED_TOKEN * row.generatedTokens;
      const request: AdmitRequest = {
        run: `line-${row.line}`,
        budget: budgetOf(options, row.contextTokens),
        width: 1,
        atMs: row.arrivalMs,
        leaseMs: durationMs + LEASE_MARGIN_MS,
      };
      const waiter: Waiter = {
        tenant,
        request,
        arrivalMs: row.arrivalMs,
        durationMs,
        tokens: row.contextTokens + row.generatedTokens,
        minorUnits: row.contextTokens * options.priceIn + row.generatedTokens * options.priceOut,
        line: row.line,
        endMs: row.arrivalMs + waitMs,
        done: false,
      };
      const outcome = await handle(tenant).admitOrWait(request, termsOf(row.arrivalMs));
      if (!outcome.ok && 'waiting' in outcome) {
        const book = waitBook(tenant);
        book.waited += 1;
        book.queue.push(waiter);
        deadlines.push(waiter);
      } else if (outcome.ok) {
        start(waiter, outcome, row.arrivalMs);
      } else {
        ledger(tenant).refused[outcome.refusal.code] += 1;
      }
      await check(tenant);
      progress?.update(row.bytesRead, rowCount, performance.now() - started);
    }
    await advance(Number.POSITIVE_INFINITY);
  } finally {
    progress?.end();
    await rows.return?.(undefined);
  }
  const wallMs = performance.now() - started;

  return replayReport({
    plane,
    options,
    target,
    ledgers: [...ledgers.values()],
    settledRuns,
    rowCount,
    wallMs,
    waits: { waitMs, ofTenant: (tenant) => waitFigures([waitBook(tenant)]), total: waitFigures([...waits.values()]) },
  });
}

/** The wait figures of some tenants together; percentiles by nearest rank over the granted waits. */
export function waitFigures(books: readonly Pick<WaitBook, 'waited' | 'granted' | 'timedOut' | 'waitsMs'>[]): WaitFigures {
  const sorted = books.flatMap((book) => book.waitsMs).sort((a, b) => a - b);
  const rank = (fraction: number): number | null =>
    sorted.length === 0 ? null : (sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] as number);
  return {
    waited: books.reduce((sum, book) => sum + book.waited, 0),
    granted: books.reduce((sum, book) => sum + book.granted, 0),
    timedOut: books.reduce((sum, book) => sum + book.timedOut, 0),
    p50Ms: rank(0.5),
    p90Ms: rank(0.9),
    p99Ms: rank(0.99),
    maxMs: sorted.length === 0 ? null : (sorted[sorted.length - 1] as number),
  };
}
