import { performance } from 'node:perf_hooks';

import { MAX_INTERVAL_MS, requireIntervalMs, runPeriodically } from './periodic.js';
import type { SweepResult } from './operator-types.js';
import type { Plane } from './plane.js';

/** Default interval between sweeps of a {@link startSweeper}: 5 s. */
export const DEFAULT_SWEEP_INTERVAL_MS = 5000;

/**
 * The longest interval a {@link startSweeper} takes: 2^31 − 1 ms (about 24.8 days), the longest
 * delay a Node timer keeps; a longer one would fire after 1 ms instead.
 */
export const MAX_SWEEP_INTERVAL_MS = MAX_INTERVAL_MS;

/**
 * How one sweep of a {@link startSweeper} went, in ms of a monotonic clock (`performance.now`).
 * - `durationMs`: how long the sweep took, from its start to its last commit.
 * - `lagBoundMs`: the longest a lapsed slot can have waited for this sweep to free it: from the
 *   start of the previous sweep that completed to the end of this one. Every lease that lapsed by
 *   that start was freed by that sweep, every later one by this sweep, so no slot this sweep freed
 *   waited longer since its lease lapsed. At most `intervalMs` + this sweep's duration + the event
 *   loop's delay in firing the timer while sweeps take less than the interval (they start one
 *   interval apart). `null` for the first sweep, and after a failed one only the sweeps that
 *   completed count (a lapse before the sweeper started may have waited any time).
 */
export interface SweepTiming {
  readonly durationMs: number;
  readonly lagBoundMs: number | null;
}

/**
 * Options of {@link startSweeper}.
 * - `intervalMs`: from the start of one sweep to the start of the next, in ms (the next starts at
 *   once when a sweep took longer); an integer from 1 to {@link MAX_SWEEP_INTERVAL_MS}; default
 *   {@link DEFAULT_SWEEP_INTERVAL_MS}. A slot whose lease lapsed is freed at most this interval plus
 *   one sweep's duration later (see {@link SweepTiming}).
 * - `tenant`: sweep one tenant only; default every tenant.
 * - `onSweep`: called with each sweep's result and timing (for logs and metrics).
 * - `onError`: called when a sweep fails (the store could not answer); the sweeper carries on
 *   and tries again at the next start. Default: `process.emitWarning`.
 * - `nowMs`: the monotonic clock that times sweeps and schedules them; default `performance.now`.
 */
export interface SweeperOptions {
  readonly intervalMs?: number | undefined;
  readonly tenant?: string | undefined;
  readonly onSweep?: ((result: SweepResult, timing: SweepTiming) => void) | undefined;
  readonly onError?: ((error: unknown) => void) | undefined;
  readonly nowMs?: (() => number) | undefined;
}

/**
 * Starts sweeping lapsed leases on an interval (docs/design/rules.md#l49–#l55): the first sweep
 * runs at once, each next one `intervalMs` after the previous one started (at once if it took
 * longer), so sweeps never overlap and the time a sweep takes does not add to the wait of the next
 * one. The timer is unref'd: it never keeps a process alive on its own. Returns `stop`, which
 * cancels the next sweep and resolves once a sweep in flight has finished. Any number of sweepers,
 * in any number of processes, may share a store: each run is swept in its own transaction, which
 * re-checks. Throws `INVALID_ARGUMENT` for a bad `intervalMs`.
 *
 * @example
 * const stop = startSweeper(plane, { intervalMs: 5000, onSweep: (r) => log.info(r) });
 * process.once('SIGTERM', () => void stop());
 */
export function startSweeper(plane: Plane, options: SweeperOptions = {}): () => Promise<void> {
  const intervalMs = requireIntervalMs(options.intervalMs ?? DEFAULT_SWEEP_INTERVAL_MS);
  const onError = options.onError ?? ((error: unknown) => process.emitWarning(`quotaplane sweep failed: ${String(error)}`));
  const nowMs = options.nowMs ?? (() => performance.now());
  const request = options.tenant === undefined ? {} : { tenant: options.tenant };
  // The start of the last sweep that completed: every lease lapsed by then was freed by it.
  let completedFromMs: number | null = null;
  return runPeriodically(
    async () => {
      const startedMs = nowMs();
      const result = await plane.sweep(request);
      const endedMs = nowMs();
      const timing: SweepTiming = { durationMs: endedMs - startedMs, lagBoundMs: completedFromMs === null ? null : endedMs - completedFromMs };
      completedFromMs = startedMs;
      options.onSweep?.(result, timing);
    },
    intervalMs,
    onError,
    'after-start',
    nowMs,
  );
}
