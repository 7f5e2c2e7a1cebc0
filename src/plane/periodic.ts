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
 * Runs `task` at once, then again `intervalMs` after each run finished, so runs never overlap. A
 * run that throws goes to `onError` and the loop carries on. The timer is unref'd: it never keeps a
 * process alive on its own. `task` gets a signal that aborts when `stop` is called, so a long run
 * can end early. Returns `stop`, which cancels the next run and resolves once a run in flight has
 * finished.
 */
export function runPeriodically(
  task: (signal: AbortSignal) => Promise<void>,
  intervalMs: number,
  onError: (error: unknown) => void,
): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  const stopping = new AbortController();

  const tick = (): void => {
    if (stopped) return;
    inFlight = task(stopping.signal)
      .catch((error: unknown) => onError(error))
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(tick, intervalMs);
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
