import { MAX_INTERVAL_MS, requireIntervalMs, runPeriodically } from './periodic.js';
import type { SweepResult } from './operator-types.js';
import type { Plane } from './plane.js';

/** Default interval between sweeps of a {@link startSweeper}: 5 s (issue #5). */
export const DEFAULT_SWEEP_INTERVAL_MS = 5000;

/**
 * The longest interval a {@link startSweeper} takes: 2^31 − 1 ms (about 24.8 days), the longest
 * delay a Node timer keeps; a longer one would fire after 1 ms instead.
 */
export const MAX_SWEEP_INTERVAL_MS = MAX_INTERVAL_MS;

/**
 * Options of {@link startSweeper}.
 * - `intervalMs`: the pause between the end of one sweep and the start of the next, in ms; an
 *   integer from 1 to {@link MAX_SWEEP_INTERVAL_MS}; default {@link DEFAULT_SWEEP_INTERVAL_MS}.
 * - `tenant`: sweep one tenant only; default every tenant.
 * - `onSweep`: called with each sweep's result (for logs and metrics).
 * - `onError`: called when a sweep fails (the store could not answer); the sweeper carries on
 *   and tries again after the interval. Default: `process.emitWarning`.
 */
export interface SweeperOptions {
  readonly intervalMs?: number | undefined;
  readonly tenant?: string | undefined;
  readonly onSweep?: ((result: SweepResult) => void) | undefined;
  readonly onError?: ((error: unknown) => void) | undefined;
}

/**
 * Starts sweeping lapsed leases on an interval (DESIGN.md decision 8): the first sweep runs at
 * once, each next one `intervalMs` after the previous one finished, so sweeps never overlap. The
 * timer is unref'd: it never keeps a process alive on its own. Returns `stop`, which cancels the
 * next sweep and resolves once a sweep in flight has finished. Any number of sweepers, in any
 * number of processes, may share a store: each run is swept in its own transaction, which re-checks.
 * Throws `INVALID_ARGUMENT` for a bad `intervalMs`.
 *
 * @example
 * const stop = startSweeper(plane, { intervalMs: 5000, onSweep: (r) => log.info(r) });
 * process.once('SIGTERM', () => void stop());
 */
export function startSweeper(plane: Plane, options: SweeperOptions = {}): () => Promise<void> {
  const intervalMs = requireIntervalMs(options.intervalMs ?? DEFAULT_SWEEP_INTERVAL_MS);
  const onError = options.onError ?? ((error: unknown) => process.emitWarning(`quotaplane sweep failed: ${String(error)}`));
  const request = options.tenant === undefined ? {} : { tenant: options.tenant };
  return runPeriodically(async () => {
    const result = await plane.sweep(request);
    options.onSweep?.(result);
  }, intervalMs, onError);
}
