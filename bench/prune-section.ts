import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { createPlane } from '../src/plane/create-plane.js';
import { DEFAULT_PRUNE_BATCH } from '../src/plane/prune-types.js';
import type { Plane } from '../src/plane/plane.js';
import pg from 'pg';

import { openStore } from '../src/store/open-store.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { startEmbeddedServer, type EmbeddedServer } from '../test/postgres/embedded-server.js';
import type { PrunableRunsRequest, PruneRunsRequest } from '../src/store/retention.js';
import type { QuotaStore, TenantStore } from '../src/store/store.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { quantileMs } from './concurrent-loop.js';

/** Concluded runs the store holds before the prune. */
const OLD_RUNS = 20_000;
/** Concurrent admission cycles kept going before, during and after the prune. */
const CALLERS = 16;
const DAY_MS = 86_400_000;
const BUDGET = { maxTokens: 2_000, maxCallTokens: 1_000 };

interface Cycles {
  readonly operations: number;
  readonly seconds: number;
  readonly latenciesMs: number[];
}

// CALLERS loops of admission cycles (admit + settle) until `done()` says stop; latency is the admit's.
async function cycles(plane: Plane, tenant: string, done: () => boolean): Promise<Cycles> {
  const latenciesMs: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CALLERS }, async () => {
      while (!done()) {
        const before = performance.now();
        const pass = await plane.admit({ tenant, budget: BUDGET, width: 1 });
        latenciesMs.push(performance.now() - before);
        if (!pass.ok) throw new Error(`the bench admission was refused: ${pass.message}`);
        await plane.settle({ tenant, run: pass.run, epoch: pass.epoch, spend: { tokens: 700, minorUnits: 0 }, concludes: true });
      }
    }),
  );
  return { operations: latenciesMs.length, seconds: (performance.now() - started) / 1000, latenciesMs };
}

function row(backend: string, name: string, result: Cycles, note: string): BenchRow {
  return {
    section: `prune-${backend}`,
    name,
    operations: result.operations,
    seconds: Math.round(result.seconds * 100) / 100,
    perSecond: Math.round(result.operations / result.seconds),
    commitsPerOperation: 2,
    latency: { of: 'admit', p50Ms: quantileMs(result.latenciesMs, 0.5), p99Ms: quantileMs(result.latenciesMs, 0.99) },
    note,
  };
}

/**
 * Retention (docs/benchmarks.md#retention), on a durable SQLite file and on PostgreSQL (an embedded
 * durable server, or `QUOTAPLANE_BENCH_PG_URL`): a store holding 20,000 runs concluded 100 days
 * ago; 16 concurrent callers run admission cycles in the same tenant before the prune, while
 * `plane.prune` removes those runs in batches of `DEFAULT_PRUNE_BATCH` (50; on SQLite through the
 * same group-commit writer, on PostgreSQL under the tenant's admission lock), and after it (when
 * every pruned run id has a tombstone an admission looks up). Reports the cycles' throughput and
 * admit latency in each phase, the prune's own rate, each batch's and page read's time, and the
 * longest gap between two batches.
 */
export const pruneSection: BenchSection = {
  name: 'prune',
  async run(context: BenchContext): Promise<BenchRow[]> {
    const rows: BenchRow[] = [];
    const directory = await mkdtemp(join(tmpdir(), 'quotaplane-bench-prune-'));
    try {
      const store = await openStore(`sqlite:${join(directory, 'quotaplane.db')}`);
      try {
        rows.push(...(await measurePrune(context, store, 'sqlite')));
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
        context.log('prune: starting an embedded PostgreSQL server (durable: fsync and synchronous_commit on)');
        server = await startEmbeddedServer('bench-prune', { durable: true });
        url = server.url;
      }
      const schema = `bench_prune_${randomBytes(4).toString('hex')}`;
      const store = await openPostgresStore(url, { schema });
      try {
        rows.push(...(await measurePrune(context, store, 'postgres')));
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

async function measurePrune(context: BenchContext, store: QuotaStore, backend: string): Promise<BenchRow[]> {
    // The store as the plane sees it, with each prune batch's and page read's time taken.
    const batchMs: number[] = [];
    const pageMs: number[] = [];
    const timed = async <T>(into: number[], call: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      try {
        return await call();
      } finally {
        into.push(performance.now() - started);
      }
    };
    const observed: QuotaStore = {
      backend: store.backend,
      tenants: () => store.tenants(),
      close: () => store.close(),
      tenant: (name) => {
        const handle = store.tenant(name);
        return new Proxy(handle, {
          get(target, property) {
            if (property === 'pruneRuns') return (request: PruneRunsRequest) => timed(batchMs, () => target.pruneRuns(request));
            if (property === 'prunableRuns') return (request: PrunableRunsRequest) => timed(pageMs, () => target.prunableRuns(request));
            const value: unknown = Reflect.get(target, property, target);
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          },
        }) as TenantStore;
      },
    };
    const plane = createPlane({ store: observed });
    const tenant = 'bench';
    await plane.setQuota(tenant, { period: 'monthly', maxTokensPerPeriod: 1_000_000_000_000 }, { newTenant: true });
    const oldMs = Date.now() - 100 * DAY_MS;
    context.log(`prune ${backend}: seeding ${OLD_RUNS} runs concluded 100 days ago`);
    for (let start = 0; start < OLD_RUNS; start += 256) {
      await Promise.all(
        Array.from({ length: Math.min(256, OLD_RUNS - start) }, async (_, offset) => {
          const run = `old-${String(start + offset).padStart(6, '0')}`;
          const pass = await plane.admit({ tenant, run, budget: BUDGET, width: 1, atMs: oldMs });
          if (!pass.ok) throw new Error(pass.message);
          await plane.settle({ tenant, run, epoch: 1, spend: { tokens: 700, minorUnits: 0 }, concludes: true, atMs: oldMs });
        }),
      );
    }
    const phaseMs = context.loopMs;
    context.log(`prune ${backend}: cycles before the prune`);
    let until = performance.now() + phaseMs;
    const before = await cycles(plane, tenant, () => performance.now() >= until);

    context.log(`prune ${backend}: cycles while the prune runs`);
    let pruning = true;
    let lastBatchAt = performance.now();
    let longestGapMs = 0;
    const pruneStarted = performance.now();
    const prune = plane
      .prune({
        tenant,
        olderThanMs: 30 * DAY_MS,
        batchSize: DEFAULT_PRUNE_BATCH,
        onProgress: () => {
          const now = performance.now();
          longestGapMs = Math.max(longestGapMs, now - lastBatchAt);
          lastBatchAt = now;
        },
      })
      .finally(() => {
        pruning = false;
      });
    const during = await cycles(plane, tenant, () => !pruning);
    const result = await prune;
    const pruneSeconds = (performance.now() - pruneStarted) / 1000;
    if (result.total.runs !== OLD_RUNS) throw new Error(`the prune removed ${result.total.runs} runs, not ${OLD_RUNS}`);

    context.log(`prune ${backend}: cycles after the prune`);
    until = performance.now() + phaseMs;
    const after = await cycles(plane, tenant, () => performance.now() >= until);
    return [
      row(backend, `${CALLERS} callers, admission cycles, before prune`, before, `${OLD_RUNS} concluded runs in the store`),
      row(backend, `${CALLERS} callers, admission cycles, during prune`, during, `rate ×${(during.operations / during.seconds / (before.operations / before.seconds)).toFixed(2)}, p50 ×${(quantileMs(during.latenciesMs, 0.5) / quantileMs(before.latenciesMs, 0.5)).toFixed(2)}, p99 ×${(quantileMs(during.latenciesMs, 0.99) / quantileMs(before.latenciesMs, 0.99)).toFixed(2)} of before`),
      row(backend, `${CALLERS} callers, admission cycles, after prune`, after, `${OLD_RUNS} tombstones; rate ×${(after.operations / after.seconds / (before.operations / before.seconds)).toFixed(2)} of before`),
      {
        section: `prune-${backend}`,
        name: `prune, batches of ${DEFAULT_PRUNE_BATCH} runs`,
        operations: result.total.runs,
        seconds: Math.round(pruneSeconds * 100) / 100,
        perSecond: Math.round(result.total.runs / pruneSeconds),
        commitsPerOperation: 0.01,
        note:
          `runs pruned per second while ${CALLERS} callers admit; per batch (answered after its commit) p50 ${quantileMs(batchMs, 0.5)} ms, ` +
          `max ${quantileMs(batchMs, 1)} ms; per page read p50 ${quantileMs(pageMs, 0.5)} ms, max ${quantileMs(pageMs, 1)} ms; ` +
          `longest gap between batches ${longestGapMs.toFixed(1)} ms`,
      },
    ];
}
