import { performance } from 'node:perf_hooks';

import type { Budget } from '../../core/budget.js';
import { QuotaError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import type { TenantQuota } from '../../core/quota.js';
import { addSpend, ZERO_SPEND, type Spend } from '../../core/spend.js';
import { createPlane } from '../../plane/create-plane.js';
import type { AdmitResult, Plane } from '../../plane/plane.js';
import type { QuotaStore } from '../../store/store.js';
import { CompletionQueue, completionSettle, type PendingCompletion } from './completion-queue.js';
import { OrderedCalls } from './ordered-calls.js';
import type { ReplayProgress } from './replay-progress.js';
import { type TenantLedger } from './replay-invariants.js';
import { replayReport } from './replay-finish.js';
import type { RefusalCounts, ReplayOptions, ReplayReport, TenantReport } from './replay-types.js';
import { openTrace, type TraceRow } from './trace-reader.js';
import { zipfSampler } from './zipf.js';

/** Virtual run time before the first token. */
export const RUN_BASE_MS = 250;
/** Virtual run time per generated token. */
export const RUN_MS_PER_GENERATED_TOKEN = 20;
/**
 * Lease a replayed pass gets beyond its own virtual duration. Replayed runs never heartbeat, so
 * the lease must cover the whole run or a long one would read as a crashed process.
 */
export const LEASE_MARGIN_MS = 60_000;
/**
 * On a SQLite store, every this many rows (and after the last one) the replay waits for every
 * answer and compares the store's slot count with its own; elsewhere (a server, PostgreSQL) it
 * does so after every admission.
 */
const PIPELINED_CHECK_ROWS = 100;
/** The epoch of the pass an admission opens (docs/design/decisions.md "Passes and leases"). */
const ADMISSION_EPOCH = 1;

/** The operator recorded on the quota changes a replay makes (audited like any other). */
export const REPLAY_OPERATOR = Object.freeze({ actor: 'quotaplane replay', basis: 'asserted' as const });

/** The plane verbs a replay uses: a local plane, or a client of a running server (`--url`). */
export type ReplayPlane = Pick<Plane, 'admit' | 'settle' | 'usage' | 'setQuota' | 'setPlaneCeiling'>;

/**
 * Where the replay runs, and where that is (for the report): an opened `store` the replay drives
 * with its own plane, or `remote`, a plane-shaped client of a running server.
 */
export interface ReplayTarget {
  readonly store?: QuotaStore | undefined;
  readonly remote?: ReplayPlane | undefined;
  readonly url: string;
  readonly temporary: boolean;
  readonly kept: boolean;
  /** Prefix of every tenant name, so a shared store's earlier rows never mix in. */
  readonly tenantPrefix: string;
}

/**
 * Drives every row of the trace through a plane on `target.store` under a virtual clock taken from
 * the trace, then measures the invariants from the store.
 *
 * For each row, in file order: first settle (with `concludes`) every admitted run whose virtual end
 * (`arrival + 250 ms + 20 ms × GeneratedTokens`) is at or before the row's arrival, at its end
 * instant; then admit the row at its arrival, for a tenant drawn by the seeded Zipf choice, with
 * budget `maxTokens = maxCallTokens = ContextTokens + maxOutputTokens` (and the same shape in
 * minor units when a minor-unit ceiling is set), width 1. After the last row the remaining runs
 * settle in end order. Real spend is `ContextTokens + GeneratedTokens` tokens and
 * `ContextTokens × priceIn + GeneratedTokens × priceOut` minor units.
 *
 * Throws `UsageError` for an unreadable or malformed trace and `QuotaError` for store faults.
 */
export async function runReplay(
  options: ReplayOptions,
  target: ReplayTarget,
  progress: ReplayProgress | null,
): Promise<ReplayReport> {
  const trace = await openTrace(options.tracePath);
  const rows = trace.rows[Symbol.asyncIterator]();
  let nowMs = 0;
  const clock: Clock = { nowMs: () => nowMs };
  const plane: ReplayPlane = target.remote ?? createPlane({ store: localStore(target), clock });

  const width = String(options.tenants).length;
  const names = Array.from(
    { length: options.tenants },
    (_, index) => `${target.tenantPrefix}tenant-${String(index + 1).padStart(width, '0')}`,
  );
  const quota = quotaOf(options);
  let item: IteratorResult<TraceRow>;
  try {
    // A wrong header or first row fails here, before any quota is written to the store.
    item = await rows.next();
    // The replay's tenants are its own, new by name (a unique prefix): it says so (docs/design/rules.md#l95).
    for (const tenant of names) await plane.setQuota(tenant, quota, { by: REPLAY_OPERATOR, newTenant: true });
    await applyPlaneCeiling(plane, options);
  } catch (error) {
    await rows.return?.(undefined);
    throw error;
  }

  const ledgers = new Map<string, TenantLedger>(names.map((tenant) => [tenant, newLedger(tenant)]));
  const ledger = (tenant: string): TenantLedger => ledgers.get(tenant) as TenantLedger;
  const pickTenant = zipfSampler({ count: options.tenants, exponent: options.zipfExponent, seed: options.seed });
  const pending = new CompletionQueue<Arrival>();
  const settledRuns: PendingCompletion[] = [];
  const flight = new OrderedCalls();
  // Only the SQLite store decides concurrent calls strictly in call order (its group commit is
  // FIFO), so only there are calls sent without awaiting each one. Through a server, requests sent
  // together may arrive in any order, and PostgreSQL runs them on several connections at once.
  const pipelined = target.remote === undefined && target.store?.backend === 'sqlite';
  // Tenants admitted to since the store's slot count was last compared with the replay's.
  const unchecked = new Set<string>();

  // Compares, once every call sent so far has been answered, each recently admitted tenant's slot
  // count in the store with the runs the replay admitted and has not settled.
  const settleCalls = async (): Promise<void> => {
    await flight.drain();
    for (const tenant of unchecked) {
      const book = ledger(tenant);
      const running = (await plane.usage({ tenant })).running;
      if (running > book.peakRunning) book.peakRunning = running;
      // Every run concludes on its one settle, so the store must hold exactly the slots of the
      // replay's unsettled runs; fewer means something else (a sweeper) released one early.
      if (running !== book.heldByReplay) book.runningMatchedHeld = false;
    }
    unchecked.clear();
  };

  // Ends an arrival at its end instant. Its admission may still be unanswered (queued in the same
  // batch): the settle is sent anyway, as pass 1 of the run the admission named, and when the
  // admission turns out refused, the settle's NOT_FOUND (it writes nothing) is that refusal's echo.
  // So the replay never waits for an answer before sending the next call.
  const settleRun = async (arrival: Arrival): Promise<void> => {
    if (arrival.answer !== undefined && !arrival.answer.ok) return;
    nowMs = arrival.endMs;
    const book = ledger(arrival.tenant);
    flight.add(
      plane.settle(completionSettle({ ...arrival, epoch: ADMISSION_EPOCH, period: '' })),
      (result) => {
        const done = completionOf(arrival);
        book.heldByReplay -= 1;
        if (result.outcome === 'settled') book.receiptsWritten += 1;
        // What the replay sent, in the period its admission named: the store's totals must match
        // this, so nothing the store echoes back is trusted here.
        const sent = { tokens: done.tokens, minorUnits: done.minorUnits };
        book.settledByReplay.set(done.period, addSpend(book.settledByReplay.get(done.period) ?? ZERO_SPEND, sent));
        settledRuns.push(done);
      },
      (error) => arrival.answer?.ok === false && error instanceof QuotaError && error.code === 'NOT_FOUND',
    );
    if (!pipelined) await settleCalls();
  };

  let rowCount = 0;
  const started = performance.now();
  progress?.begin(trace.sizeBytes);
  try {
    for (; item.done !== true; item = await rows.next()) {
      const row = item.value;
      for (let next = pending.peek(); next !== undefined && next.endMs <= row.arrivalMs; next = pending.peek()) {
        await settleRun(pending.pop() as Arrival);
      }
      nowMs = row.arrivalMs;
      rowCount += 1;
      const tenant = names[pickTenant()] as string;
      const book = ledger(tenant);
      const durationMs = RUN_BASE_MS + RUN_MS_PER_GENERATED_TOKEN * row.generatedTokens;
      const arrival: Arrival = {
        tenant,
        run: `line-${row.line}`,
        endMs: row.arrivalMs + durationMs,
        tokens: row.contextTokens + row.generatedTokens,
        minorUnits: row.contextTokens * options.priceIn + row.generatedTokens * options.priceOut,
        line: row.line,
        answer: undefined,
      };
      // Every arrival waits in the queue for its end instant; a refused one is dropped there.
      pending.push(arrival);
      flight.add(
        plane.admit({
          tenant,
          run: arrival.run,
          budget: budgetOf(options, row.contextTokens),
          width: 1,
          atMs: row.arrivalMs,
          leaseMs: durationMs + LEASE_MARGIN_MS,
        }),
        (admitted) => {
          arrival.answer = admitted;
          if (admitted.ok) {
            book.admitted += 1;
            book.heldByReplay += 1;
            book.periods.add(admitted.period);
            // Slots only grow at admission, and answers are applied in the order the calls were
            // queued, so the largest count right after each admission is the largest the tenant
            // ever held (compared with the store's own count at every check).
            if (book.heldByReplay > book.peakRunning) book.peakRunning = book.heldByReplay;
            unchecked.add(tenant);
          } else {
            book.refused[admitted.refusal.code] += 1;
          }
        },
      );
      // On a SQLite store, compare the store's slot counts with the replay's now and then.
      if (!pipelined || rowCount % PIPELINED_CHECK_ROWS === 0) await settleCalls();
      progress?.update(row.bytesRead, rowCount, performance.now() - started);
    }
    // Checked once more with the last arrivals still holding their slots, then after the last settle.
    await settleCalls();
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) await settleRun(next);
    await settleCalls();
  } finally {
    progress?.end();
    // Answers every call still queued when a store fault ended the loop early, then closes the
    // trace file (a no-op after the last row).
    await flight.drain().catch(() => undefined);
    await rows.return?.(undefined);
  }
  const wallMs = performance.now() - started;

  return replayReport({ plane, options, target, ledgers: [...ledgers.values()], settledRuns, rowCount, wallMs });
}

/** `--plane-max-concurrent`: sets the store's plane-wide ceiling before the first row. */
export async function applyPlaneCeiling(plane: Pick<Plane, 'setPlaneCeiling'>, options: ReplayOptions): Promise<void> {
  if (options.planeMaxConcurrent !== undefined) {
    await plane.setPlaneCeiling({ maxConcurrentRuns: options.planeMaxConcurrent }, REPLAY_OPERATOR);
  }
}

/** The quota every tenant gets from the flags; absent flags leave the ceiling absent (unlimited). */
export function quotaOf(options: ReplayOptions): TenantQuota {
  return {
    period: options.period,
    ...(options.maxConcurrent === undefined ? {} : { maxConcurrentRuns: options.maxConcurrent }),
    ...(options.tokensPerPeriod === undefined ? {} : { maxTokensPerPeriod: options.tokensPerPeriod }),
    ...(options.minorUnitsPerPeriod === undefined ? {} : { maxMinorUnitsPerPeriod: options.minorUnitsPerPeriod }),
  };
}

/**
 * One row's budget: a single model call, so the run's total and its per-call bound are the same,
 * the prompt plus the most output it may generate. Minor units are declared only under a
 * minor-unit ceiling, as a caller that is not billed per call would do.
 */
export function budgetOf(options: ReplayOptions, contextTokens: number): Budget {
  const tokens = contextTokens + options.maxOutputTokens;
  if (options.minorUnitsPerPeriod === undefined) return { maxTokens: tokens, maxCallTokens: tokens };
  const minorUnits = contextTokens * options.priceIn + options.maxOutputTokens * options.priceOut;
  return { maxTokens: tokens, maxCallTokens: tokens, maxMinorUnits: minorUnits, maxCallMinorUnits: minorUnits };
}

/**
 * A row of the trace whose admission was sent: it waits in the completion queue for its end
 * instant, and is settled then unless its admission (`answer`, set when it is applied) was refused.
 */
interface Arrival extends Omit<PendingCompletion, 'epoch' | 'period'> {
  answer: AdmitResult | undefined;
}

// The completion of an arrival whose admission was granted (pass 1, in the period it named).
function completionOf(arrival: Arrival): PendingCompletion {
  const answer = arrival.answer;
  if (answer === undefined || !answer.ok) throw new Error(`line ${arrival.line} was settled but its admission was not granted`);
  // The settle was sent before this answer was known, for the run and pass the admission names.
  if (answer.run !== arrival.run || answer.epoch !== ADMISSION_EPOCH) {
    throw new Error(`line ${arrival.line} was admitted as ${answer.run}/${answer.epoch}, not the ${arrival.run}/${ADMISSION_EPOCH} it settled`);
  }
  const { answer: _answer, ...rest } = arrival;
  return { ...rest, run: answer.run, epoch: answer.epoch, period: answer.period };
}

/** A tenant's ledger before its first row. */
export function newLedger(tenant: string): TenantLedger {
  return {
    tenant,
    admitted: 0,
    refused: { TooManyRuns: 0, SpentOut: 0, Unbounded: 0, Halted: 0 },
    peakRunning: 0,
    heldByReplay: 0,
    runningMatchedHeld: true,
    receiptsWritten: 0,
    periods: new Set(),
    settledByReplay: new Map(),
  };
}

// A target names a store or a remote plane; one with neither is a bug in whoever built it.
export function localStore(target: ReplayTarget): QuotaStore {
  if (target.store === undefined) throw new Error('a replay target needs a store or a remote plane');
  return target.store;
}
