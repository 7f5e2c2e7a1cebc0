import { Histogram, type Registry } from 'prom-client';

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
 * Returns the function that records one sweep.
 */
export function createSweepMetrics(registry: Registry, prefix: string): (timing: SweepTiming) => void {
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
  return (timing) => {
    duration.observe(timing.durationMs / 1000);
    if (timing.lagBoundMs !== null) lag.observe(timing.lagBoundMs / 1000);
  };
}
