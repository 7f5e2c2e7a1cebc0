import { performance } from 'node:perf_hooks';

import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';

/**
 * The longest interval a periodic task (sweeper, pruner) takes: 2^31 − 1 ms (about 24.8 days),
 * the longest delay a Node timer keeps; a longer one would fire after 1 ms instead.
 */
export const MAX_INTERVAL_MS = 2_147_483_647;

/** Throws `INVALID_ARGUMENT` naming `intervalMs` unless it is an integer from 1 to {@link MAX_INTERVAL_MS}. */
export function requireIntervalMs(intervalMs: unknown): number {
  if (typeof intervalMs !== 'number' || !Number.isSafeInteger(intervalMs) || intervalMs < 1 || intervalMs > MAX_INTERVAL_MS) {
    throw invalidArgument('intervalMs', `must be an integer number of milliseconds from 1 to ${MAX_INTERVAL_MS}, got ${describe(intervalMs)}`);
  }
  return intervalMs;
}

/**
 * When a periodic task runs again:
 * - `'after-end'`: `intervalMs` after the previous run finished (a pause between runs);
 * - `'after-start'`: `intervalMs` after the previous run started, or at once when it took longer,
 *   so the time from one start to the next is the interval, not the interval plus the run.
 */
export type PeriodicSchedule = 'after-end' | 'after-start';

/** A monotonic clock in ms (`performance.now`), read to time runs; tests may give their own. */
export type MonotonicMs = () => number;

/**
 * Runs `task` at once, then again as `schedule` says (default `'after-end'`), so runs never
 * overlap. A run that throws goes to `onError` and the loop carries on. The timer is unref'd: it
 * never keeps a process alive on its own. `task` gets a signal that aborts when `stop` is called, so
 * a long run can end early. Returns `stop`, which cancels the next run and resolves once a run in
 * flight has finished. `nowMs` times the runs for `'after-start'` (default `performance.now`).
 */
export function runPeriodically(
  task: (signal: AbortSignal) => Promise<void>,
  intervalMs: number,
  onError: (error: unknown) => void,
  schedule: PeriodicSchedule = 'after-end',
  nowMs: MonotonicMs = () => performance.now(),
): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const stopping = new AbortController();

  const tick = (): void => {
    if (stopped) return;
    const startedMs = nowMs();
    inFlight = task(stopping.signal)
      .catch((error: unknown) => onError(error))
      .finally(() => {
        if (stopped) return;
        const delayMs = schedule === 'after-end' ? intervalMs : Math.max(0, Math.ceil(startedMs + intervalMs - nowMs()));
        timer = setTimeout(tick, delayMs);
        timer.unref();
      });
  };
  tick();

  return async () => {
    stopped = true;
    stopping.abort();
    if (timer !== undefined) clearTimeout(timer);
    await inFlight;
  };
}
