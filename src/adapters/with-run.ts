import { describe } from '../core/amounts.js';
import type { Budget } from '../core/budget.js';
import { invalidArgument, isQuotaError, QuotaError } from '../core/errors.js';
import type { AgentIdentity } from '../core/halt-scope.js';
import type { Refused, WithheldRefusal } from '../core/refusal.js';
import { requireSpend, type Spend, ZERO_SPEND } from '../core/spend.js';
import type { AdmitRefusal, SettleInput, SettleResult } from '../plane/plane.js';
import { PassBooks, type ActiveRun } from './active-run.js';
import { RunRefusedError, RunSettleError } from './run-errors.js';
import type { RunPlane } from './run-plane.js';

/** The lease `withRun` assumes when none is given, to time its heartbeats: the plane's default, 60 000 ms. */
const ASSUMED_LEASE_MS = 60_000;

/**
 * Options of {@link withRun}.
 * - `tenant`, `run`, `agent`, `chain`, `budget`, `width`, `leaseMs`: as `plane.admit` takes them
 *   (a `run` id of your own makes a retried `withRun` after a lost answer idempotent).
 * - `resume`: the id of a paused run (for example `RunWithheldError.run`) to continue in a new
 *   pass (`plane.resume`, never gated) instead of admitting a new run; `agent`, `chain` and
 *   `width` are the run's own then and are not sent. `budget` still caps this pass's calls, less
 *   `spentBefore` (what earlier passes booked; default zero).
 * - `signal`: an `AbortSignal` that ends the run like a thrown error: the body's `run.signal`
 *   aborts, and the pass is settled, concluding, with what was booked.
 * - `heartbeatEveryMs`: the heartbeat timer's period; default a third of `leaseMs` (of 60 000 ms
 *   when `leaseMs` is not given; give `leaseMs` when your plane's default lease differs).
 * - `throwOnRefusal`: throw `RunRefusedError` instead of returning an admission refusal; default false.
 * - `settleAttempts` (default 4) and `settleTimeoutMs` (default 10 000): a settle that throws
 *   `STORE_UNAVAILABLE` or does not answer within the timeout is sent again with the same payload,
 *   up to `settleAttempts` times, waiting 100, 200, 400 … ms between attempts; the receipt makes a
 *   repeat safe (an attempt that landed answers `already-settled`).
 * - `waitMs`: how long the admission may wait for a slot (`plane.admit`'s `waitMs`;
 *   docs/concepts/waiting.md); only a `TooManyRuns` refusal waits. `signal` also cancels the wait.
 *   Not used with `resume`.
 */
export interface WithRunOptions {
  readonly tenant: string;
  readonly run?: string | undefined;
  readonly resume?: string | undefined;
  readonly agent?: AgentIdentity | undefined;
  readonly chain?: readonly string[] | undefined;
  readonly budget?: Budget | undefined;
  readonly width?: number | undefined;
  readonly leaseMs?: number | undefined;
  readonly waitMs?: number | undefined;
  readonly spentBefore?: Spend | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly heartbeatEveryMs?: number | undefined;
  readonly throwOnRefusal?: boolean | undefined;
  readonly settleAttempts?: number | undefined;
  readonly settleTimeoutMs?: number | undefined;
}

/**
 * The answer of a `withRun` whose body returned: its `value`, the pass `(run, epoch)`, the `spend`
 * it booked and settled (`estimated` when part of it is a per-call bound standing in for a missing
 * usage report, docs/design/decisions.md "Usage never reads as zero by absence"), and the settle's
 * answer (`settle.receipt`).
 */
export interface RunCompleted<T> {
  readonly ok: true;
  readonly value: T;
  readonly run: string;
  readonly epoch: number;
  readonly spend: Spend;
  readonly estimated: boolean;
  readonly settle: SettleResult;
}

/** Answer of {@link withRun}: the completed run, or the admission's (or resume's) refusal value. */
export type WithRunResult<T> = RunCompleted<T> | Refused<AdmitRefusal | WithheldRefusal>;

/**
 * Runs `body` as one pass of a quotaplane run, with the whole lifecycle done for it:
 *
 * 1. **Admits** the run (`plane.admit`), or resumes a paused one (`resume`). A refusal
 *    (`TooManyRuns`, `SpentOut`, `Unbounded`, `Halted`, or `Withheld` on a resume) is returned as a
 *    value and the body never runs (or thrown as `RunRefusedError` with `throwOnRefusal`).
 * 2. **Heartbeats** on a timer while the body runs (a lost beat to an unavailable store is retried
 *    on the next tick; the lease is what protects the slot meanwhile).
 * 3. Gives the body an {@link ActiveRun}: `run.record(spend)` books each model call's cost,
 *    `run.dispatch(grant, key)` counts each rate-ceilinged tool call, `run.signal` says when to stop.
 * 4. **Settles exactly once** on every way out, with the spend booked:
 *    - the body returns → settles concluding, answers {@link RunCompleted};
 *    - the body throws, or `signal` aborts → settles concluding, then rethrows the body's error;
 *    - a heartbeat or dispatch answers `Withheld` → `run.signal` aborts, the pass is settled
 *      **without** concluding (the run is paused and keeps its hold) and `RunWithheldError` is
 *      thrown, naming the run to resume after the lift;
 *    - the pass was lost (a heartbeat's `CONFLICT` or `NOT_FOUND`: swept, or superseded) → settled
 *      concluding (a late settle is accepted once), and that error is thrown.
 *    A settle that fails on every attempt throws `RunSettleError` with the exact settle to repeat.
 *
 * Calls still in flight when the body ends (a stream nobody finished reading) are booked at their
 * per-call bound, marked as an estimate. Works the same over `createPlane` and `createClient`
 * (any {@link RunPlane}). Throws `INVALID_ARGUMENT` naming a malformed option.
 *
 * @example
 * const done = await withRun(plane, { tenant: 'acme', budget: { maxTokens: 20_000, maxCallTokens: 4_000 } }, async (run) => {
 *   const answer = await callModel(run.signal);
 *   run.record({ tokens: answer.usage.totalTokens, minorUnits: 0 });
 *   return answer.text;
 * });
 * if (!done.ok) console.log(done.refusal.code, done.message);
 */
export async function withRun<T>(plane: RunPlane, options: WithRunOptions, body: (run: ActiveRun) => Promise<T>): Promise<WithRunResult<T>> {
  const settings = readOptions(options);
  options.signal?.throwIfAborted();

  const pass =
    options.resume === undefined
      ? await plane.admit({
          tenant: options.tenant,
          ...defined({ run: options.run, agent: options.agent, chain: options.chain, budget: options.budget, width: options.width, leaseMs: options.leaseMs }),
          ...defined({ waitMs: options.waitMs, signal: options.waitMs === undefined ? undefined : options.signal }),
        })
      : await plane.resume({ tenant: options.tenant, run: options.resume, ...defined({ leaseMs: options.leaseMs }) });
  if (!pass.ok) {
    if (options.throwOnRefusal === true) throw new RunRefusedError(pass);
    return pass;
  }

  const books = new PassBooks({
    plane,
    tenant: options.tenant,
    run: pass.run,
    epoch: pass.epoch,
    budget: options.budget ?? {},
    leaseMs: options.leaseMs,
    spentBefore: settings.spentBefore,
  });
  const onAbort = () => books.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const timer = setInterval(() => {
    books.heartbeat().catch(() => {
      // A Withheld or lost pass has stopped the books already; an unavailable store is retried next tick.
    });
  }, settings.heartbeatEveryMs);
  timer.unref();

  let outcome: { readonly threw: false; readonly value: T } | { readonly threw: true; readonly error: unknown };
  try {
    outcome = { threw: false, value: await body(books) };
  } catch (error) {
    outcome = { threw: true, error };
  } finally {
    clearInterval(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
  books.close();

  const stop = books.stop;
  const withheld = stop?.kind === 'withheld';
  const pending: SettleInput = { tenant: options.tenant, run: pass.run, epoch: pass.epoch, spend: books.spend, concludes: !withheld };
  const settle = await settleWithRetries(plane, pending, settings, outcome.threw ? outcome.error : undefined);

  if (stop?.kind === 'withheld') throw books.withheldError(stop.refusal, settle);
  if (stop?.kind === 'lost') throw stop.error;
  if (outcome.threw) throw outcome.error;
  return { ok: true, value: outcome.value, run: pass.run, epoch: pass.epoch, spend: pending.spend, estimated: books.estimated, settle };
}

interface Settings {
  readonly heartbeatEveryMs: number;
  readonly settleAttempts: number;
  readonly settleTimeoutMs: number;
  readonly spentBefore: Spend;
}

function readOptions(options: WithRunOptions): Settings {
  if (typeof options !== 'object' || options === null) throw invalidArgument('options', `must be an object, got ${describe(options)}`);
  if (options.resume !== undefined && options.run !== undefined) {
    throw invalidArgument('resume', 'names the run to resume; give either run (a new admission) or resume, not both');
  }
  const positive = (field: string, value: unknown, fallback: number, max: number): number => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
      throw invalidArgument(field, `must be an integer from 1 to ${max}, got ${describe(value)}`);
    }
    return value;
  };
  const leaseMs = typeof options.leaseMs === 'number' && options.leaseMs > 0 ? options.leaseMs : ASSUMED_LEASE_MS;
  return {
    heartbeatEveryMs: positive('heartbeatEveryMs', options.heartbeatEveryMs, Math.max(1, Math.floor(leaseMs / 3)), 2_147_483_647),
    settleAttempts: positive('settleAttempts', options.settleAttempts, 4, 100),
    settleTimeoutMs: positive('settleTimeoutMs', options.settleTimeoutMs, 10_000, 2_147_483_647),
    spentBefore: options.spentBefore === undefined ? ZERO_SPEND : requireSpend('spentBefore', options.spentBefore),
  };
}

/** Drops the members whose value is undefined, so the plane sees only what the caller gave. */
function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}

async function settleWithRetries(plane: RunPlane, pending: SettleInput, settings: Settings, bodyError: unknown): Promise<SettleResult> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await withTimeout(plane.settle(pending), settings.settleTimeoutMs, pending);
    } catch (error) {
      if (!isQuotaError(error, 'STORE_UNAVAILABLE') || attempt >= settings.settleAttempts) throw new RunSettleError(pending, attempt, error, bodyError);
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** (attempt - 1)));
    }
  }
}

/** `call`, or `STORE_UNAVAILABLE` when it has not answered within `timeoutMs` (it may still land: the retry is answered by its receipt). */
function withTimeout<T>(call: Promise<T>, timeoutMs: number, pending: SettleInput): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new QuotaError('STORE_UNAVAILABLE', `the settle of run '${pending.run}' pass ${pending.epoch} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  call.catch(() => {
    // An attempt abandoned by its timeout may fail later; the next attempt decides.
  });
  return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
}
