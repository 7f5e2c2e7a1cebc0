import { performance } from 'node:perf_hooks';

import { Gauge, Histogram, type Registry } from 'prom-client';

import type { SweepTiming } from '../plane/sweeper.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Records one sweep of the process's sweeper (`startSweeper`'s `onSweep`) in `/metrics`
     * (sweep-metrics.ts); `quotaplane serve` hands every sweep of its sweeper here.
     */
    observeSweep(timing: SweepTiming): void;
  }
}

// Around the sweep intervals people run (serve's default is 5 s), up to a minute late.
const LAG_BUCKETS_SECONDS = [0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 7.5, 10, 15, 30, 60];
const DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The sweeper's figures of `/metrics`, one observation per sweep (sweeper.ts `SweepTiming`):
 * - `quotaplane_sweep_lag_seconds`: the bound on how late a sweep freed any slot whose lease had
 *   lapsed, from the start of the previous completed sweep to the end of this one (no slot waited
 *   longer between its lease's expiry and the commit that freed it). It stays under the sweep
 *   interval plus one sweep's duration (plus the event loop's delay in firing the timer); the first
 *   sweep of a process is not observed, having no previous one.
 * - `quotaplane_sweep_duration_seconds`: how long each sweep took, every tenant in scope.
 * - `quotaplane_sweep_behind_seconds`: at scrape time, how far behind the sweep is: the seconds
 *   since the start of the last sweep that completed. Every lease that had lapsed by that start was
 *   swept by it, so no lapsed lease has waited longer than this to be swept; unlike the lag, it
 *   keeps growing while the sweeper is stalled or every sweep fails. No series until a sweep of
 *   this process has completed (a process without a sweeper has none). Read from memory, no store
 *   read. `nowMs` is the monotonic clock of the sweeper (`performance.now`, its default).
 * Returns the function that records one sweep.
 */
export function createSweepMetrics(registry: Registry, prefix: string, nowMs: () => number = () => performance.now()): (timing: SweepTiming) => void {
  const lag = new Histogram({
    name: `${prefix}sweep_lag_seconds`,
    help: 'Per sweep, the longest a slot whose lease lapsed can have waited for it: from the start of the previous completed sweep to the end of this one, in seconds.',
    buckets: LAG_BUCKETS_SECONDS,
    registers: [registry],
  });
  const duration = new Histogram({
    name: `${prefix}sweep_duration_seconds`,
    help: 'How long each sweep of lapsed leases took, in seconds.',
    buckets: DURATION_BUCKETS_SECONDS,
    registers: [registry],
  });
  // The start of the last completed sweep, on `nowMs`'s clock: its end (now) less its duration.
  // The gauge is registered at the first completed sweep: a label-free gauge always has a value,
  // and 0 before any sweep would claim a sweeper that is not there.
  let completedFromMs = 0;
  let behind: Gauge | null = null;
  return (timing) => {
    completedFromMs = nowMs() - timing.durationMs;
    behind ??= new Gauge({
      name: `${prefix}sweep_behind_seconds`,
      help: "Seconds since the start of this process's last completed sweep of lapsed leases: no lapsed lease has waited longer to be swept. Grows while the sweeper is stalled or failing; absent before the first sweep completes.",
      registers: [registry],
      collect() {
        this.set(Math.max(0, nowMs() - completedFromMs) / 1000);
      },
    });
    duration.observe(timing.durationMs / 1000);
    if (timing.lagBoundMs !== null) lag.observe(timing.lagBoundMs / 1000);
  };
}
