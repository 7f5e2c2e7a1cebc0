import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { startServer } from '../../src/cli/serve/start-server.js';
import { until } from '../until.js';
import { temporaryDirectory } from '../cli/cli-helpers.js';
import { bearer, serviceFixture, type ServiceFixture } from './http-fixtures.js';

// The sweeper's figures on /metrics (sweep-metrics.ts): per sweep, how long it took and the bound on
// how late it freed a lapsed slot (sweeper.ts SweepTiming), fed by `quotaplane serve`'s sweeper.

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('quotaplane_sweep_lag_seconds and quotaplane_sweep_duration_seconds', () => {
  it('each sweep observes its duration, and its lag bound once there was a sweep before it', async () => {
    const f: ServiceFixture = await serviceFixture();
    cleanups.push(() => f.close());
    f.app.observeSweep({ durationMs: 120, lagBoundMs: null });
    f.app.observeSweep({ durationMs: 80, lagBoundMs: 620 });
    const text = (await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) })).body;
    expect(sample(text, 'quotaplane_sweep_duration_seconds_count')).toBe(2);
    expect(sample(text, 'quotaplane_sweep_duration_seconds_sum')).toBeCloseTo(0.2, 10);
    expect(sample(text, 'quotaplane_sweep_lag_seconds_count')).toBe(1);
    expect(sample(text, 'quotaplane_sweep_lag_seconds_sum')).toBeCloseTo(0.62, 10);
    expect(sample(text, 'quotaplane_sweep_lag_seconds_bucket{le="0.5"}')).toBe(0);
    expect(sample(text, 'quotaplane_sweep_lag_seconds_bucket{le="0.75"}')).toBe(1);
    expect(text).toContain('# TYPE quotaplane_sweep_lag_seconds histogram');
  });

  it("serve's sweeper feeds them", async () => {
    const dir = temporaryDirectory();
    cleanups.push(dir.remove);
    const server = await startServer({ storeUrl: `sqlite:${join(dir.path, 'swept.db')}`, host: '127.0.0.1', port: 0, sweepIntervalMs: 20 });
    cleanups.push(() => server.close());
    const scrape = async (): Promise<string> =>
      (await fetch(`${server.url}/metrics`, { headers: bearer(server.firstKey?.secret ?? '') })).text();
    await until(async () => (sample(await scrape(), 'quotaplane_sweep_lag_seconds_count') ?? 0) >= 2, 'two sweeps after the first are on /metrics');
    expect(sample(await scrape(), 'quotaplane_sweep_duration_seconds_count')).toBeGreaterThanOrEqual(3);
  });
});
