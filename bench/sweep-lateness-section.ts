import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

import pg from 'pg';

import { createPlane } from '../src/plane/create-plane.js';
import type { Plane } from '../src/plane/plane.js';
import { startSweeper, type SweepTiming } from '../src/plane/sweeper.js';
import { openStore } from '../src/store/open-store.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import type { QuotaStore, TenantStore } from '../src/store/store.js';
import type { SweptRun } from '../src/store/types.js';
import { startEmbeddedServer, type EmbeddedServer } from '../test/postgres/embedded-server.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { quantileMs } from './concurrent-loop.js';

/** The sweep interval measured, ms (`serve`'s default is 5 000). */
const INTERVAL_MS = 500;
/** A run whose lease will lapse is admitted this often, ms. */
const LAPSE_EVERY_MS = 20;
/** Concurrent admission cycles (admit + settle) of the loaded phase, in this process. */
const CALLERS = 16;
/** Busy-looping processes of the loaded phase, besides this one (the machine's other load). */
const BURNERS = 2;
const BUDGET = { maxTokens: 2_000, maxCallTokens: 1_000 };

interface Phase {
  readonly latenessMs: number[];
  readonly timings: SweepTiming[];
  readonly loopDelayP99Ms: number;
  readonly seconds: number;
}

/**
 * How late the sweeper frees the slot of a run whose lease lapsed (its holder died), with
 * `intervalMs` 500, a tenth of `serve`'s default (docs/benchmarks.md#sweep-lateness): runs are
 * admitted every 20 ms with leases of 200–1000 ms and never heard from again; the lateness of each
 * is the time from its lease's expiry to the commit of the `sweepRun` that freed its slot. Idle:
 * nothing else runs. Loaded: 16 callers run admission cycles in the same process (the same event
 * loop and store as the sweeper, as in `serve`) and two more processes spin on the CPU. On a
 * durable SQLite file and on PostgreSQL (an embedded durable server, or `QUOTAPLANE_BENCH_PG_URL`).
 * Each row's note gives the worst lateness, the sweeper's own bound on it (`lagBoundMs`,
 * sweeper.ts), the longest sweep and the event loop's p99 delay.
 */
export const sweepLatenessSection: BenchSection = {
  name: 'sweep-lateness',
  async run(context: BenchContext): Promise<BenchRow[]> {
    const rows: BenchRow[] = [];
    const directory = await mkdtemp(join(tmpdir(), 'quotaplane-bench-sweep-'));
    try {
      const store = await openStore(`sqlite:${join(directory, 'quotaplane.db')}`);
      try {
        rows.push(...(await measureLateness(context, store, 'sqlite')));
      } finally {
        await store.close();
      }
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
    const external = process.env.QUOTAPLANE_BENCH_PG_URL;
    let server: EmbeddedServer | null = null;
    try {
      let url: string;
      if (external !== undefined && external !== '') url = external;
      else {
        context.log('sweep-lateness: starting an embedded PostgreSQL server (durable: fsync and synchronous_commit on)');
        server = await startEmbeddedServer('bench-sweep', { durable: true });
        url = server.url;
      }
      const schema = `bench_sweep_${randomBytes(4).toString('hex')}`;
      const store = await openPostgresStore(url, { schema });
      try {
        rows.push(...(await measureLateness(context, store, 'postgres')));
      } finally {
        await store.close();
        if (server === null) {
          const admin = new pg.Client({ connectionString: url });
          await admin.connect();
          await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => admin.end());
        }
      }
    } finally {
      await server?.dispose();
    }
    return rows;
  },
};

async function measureLateness(context: BenchContext, store: QuotaStore, backend: string): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  for (const loaded of [false, true]) {
    const phase = loaded ? 'loaded' : 'idle';
    context.log(`sweep-lateness ${backend}: ${phase}`);
    const result = await measurePhase(context, store, `${backend}-${phase}-${randomBytes(3).toString('hex')}`, loaded);
    const durations = result.timings.map((timing) => timing.durationMs);
    const bounds = result.timings.flatMap((timing) => (timing.lagBoundMs === null ? [] : [timing.lagBoundMs]));
    if (durations.length === 0) durations.push(Number.NaN);
    if (bounds.length === 0) bounds.push(Number.NaN);
    const worst = Math.max(...result.latenessMs);
    rows.push({
      section: `sweep-lateness-${backend}`,
      name: `${phase}: lease lapsed → slot freed, interval ${INTERVAL_MS} ms`,
      operations: result.latenessMs.length,
      seconds: Math.round(result.seconds * 100) / 100,
      perSecond: Math.round(result.latenessMs.length / result.seconds),
      commitsPerOperation: null,
      latency: { of: 'lateness', p50Ms: quantileMs(result.latenessMs, 0.5), p99Ms: quantileMs(result.latenessMs, 0.99) },
      note:
        `worst ${worst.toFixed(0)} ms; sweeper's bound (lagBoundMs) worst ${Math.max(...bounds).toFixed(0)} ms; ` +
        `sweep p50 ${quantileMs(durations, 0.5).toFixed(0)} ms, worst ${Math.max(...durations).toFixed(0)} ms over ${durations.length} sweeps; ` +
        `event loop delay p99 ${result.loopDelayP99Ms.toFixed(0)} ms` +
        (loaded ? `; ${CALLERS} callers in cycles, ${BURNERS} CPU burners` : ''),
    });
  }
  return rows;
}

async function measurePhase(context: BenchContext, store: QuotaStore, tag: string, loaded: boolean): Promise<Phase> {
  const expiresAtMs = new Map<string, number>();
  const latenessMs: number[] = [];
  // The store as the plane sees it, with the instant each sweepRun that freed a slot committed.
  const observed: QuotaStore = {
    backend: store.backend,
    tenants: () => store.tenants(),
    close: () => store.close(),
    tenant: (name) =>
      new Proxy(store.tenant(name), {
        get(target, property) {
          if (property === 'sweepRun') {
            return async (request: { run: string; atMs: number }): Promise<SweptRun> => {
              const outcome = await target.sweepRun(request);
              const expiry = expiresAtMs.get(request.run);
              if (outcome.releasedSlot && expiry !== undefined) latenessMs.push(Date.now() - expiry);
              return outcome;
            };
          }
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      }) as TenantStore,
  };
  const plane = createPlane({ store: observed });
  const lapsing = `lapsing-${tag}`;
  const load = `load-${tag}`;
  await plane.setQuota(lapsing, { period: 'monthly', maxConcurrentRuns: 100_000, maxTokensPerPeriod: 1_000_000_000_000 }, { newTenant: true });
  await plane.setQuota(load, { period: 'monthly', maxTokensPerPeriod: 1_000_000_000_000 }, { newTenant: true });

  const burners: ChildProcess[] = loaded
    ? Array.from({ length: BURNERS }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))
    : [];
  const timings: SweepTiming[] = [];
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const stopSweeper = startSweeper(plane, {
    intervalMs: INTERVAL_MS,
    onSweep: (_result, timing) => {
      if (timing !== undefined) timings.push(timing);
    },
    onError: (error) => context.log(`sweep failed: ${String(error)}`),
  });
  const started = performance.now();
  const endAt = started + Math.max(context.loopMs, 5_000);
  try {
    const cycles = loaded ? runCycles(plane, load, () => performance.now() >= endAt) : Promise.resolve();
    let admitted = 0;
    while (performance.now() < endAt) {
      const run = `lapse-${admitted}`;
      admitted += 1;
      const leaseMs = 200 + Math.floor(Math.random() * 800);
      void plane.admit({ tenant: lapsing, run, budget: BUDGET, leaseMs }).then((pass) => {
        if (pass.ok) expiresAtMs.set(run, pass.leaseExpiresAtMs);
      });
      await new Promise((resolve) => setTimeout(resolve, LAPSE_EVERY_MS));
    }
    await cycles;
    // Until every lease has lapsed and been swept.
    const deadline = performance.now() + 10_000;
    while (latenessMs.length < expiresAtMs.size && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    if (latenessMs.length < expiresAtMs.size) throw new Error(`only ${latenessMs.length} of ${expiresAtMs.size} lapsed slots were freed`);
  } finally {
    await stopSweeper();
    delay.disable();
    for (const burner of burners) burner.kill('SIGKILL');
  }
  return { latenessMs, timings, loopDelayP99Ms: delay.percentile(99) / 1e6, seconds: (performance.now() - started) / 1000 };
}

// CALLERS loops of admission cycles (admit + settle) until `done()` says stop.
async function runCycles(plane: Plane, tenant: string, done: () => boolean): Promise<void> {
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (!done()) {
        const pass = await plane.admit({ tenant, budget: BUDGET, width: 1 });
        if (!pass.ok) throw new Error(`the bench admission was refused: ${pass.message}`);
        await plane.settle({ tenant, run: pass.run, epoch: pass.epoch, spend: { tokens: 700, minorUnits: 0 }, concludes: true });
      }
    }),
  );
}
