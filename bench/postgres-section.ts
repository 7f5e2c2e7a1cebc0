import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { RateLimiterPostgres } from 'rate-limiter-flexible';

import { createPlane } from '../src/plane/create-plane.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { startEmbeddedServer, type EmbeddedServer } from '../test/postgres/embedded-server.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { type CallerCall, concurrentInterleavedLoops, type ConcurrentResult, quantileMs } from './concurrent-loop.js';

/** Set to a connection URL to bench an existing server instead of an embedded one. */
const BENCH_URL_VARIABLE = 'QUOTAPLANE_BENCH_PG_URL';

/** How many callers run at once, and over how many tenants (quotaplane) or keys (the peer). */
interface Shape {
  readonly label: string;
  readonly callers: number;
  readonly tenants: number;
}

// One caller; eight on one tenant (admissions of one tenant serialise on its lock); eight on eight
// tenants (they never wait for one another). The peer gets the same callers on one key or eight.
const SHAPES: readonly Shape[] = [
  { label: '1 caller', callers: 1, tenants: 1 },
  { label: '8 callers, 1 tenant', callers: 8, tenants: 1 },
  { label: '8 callers, 8 tenants', callers: 8, tenants: 8 },
];

/**
 * The PostgreSQL section (issue #3 item 8): quotaplane's admission cycle per second with 1 and 8
 * concurrent callers (8 on one tenant and on eight), interleaved with rate-limiter-flexible's
 * `RateLimiterPostgres.consume()` at the same concurrency on the same server, plus p50/p99 of
 * `admit` (and of `consume()`). It starts its own embedded PostgreSQL with durable settings
 * (fsync and synchronous_commit on), or uses `QUOTAPLANE_BENCH_PG_URL`; there it works in two
 * fresh schemas and drops them at the end. Each library gets a pool of as many connections as it
 * has callers, so the database sees the same number of sessions from both.
 */
export const postgresSection: BenchSection = {
  name: 'postgres',
  async run(context: BenchContext): Promise<BenchRow[]> {
    const external = process.env[BENCH_URL_VARIABLE];
    let server: EmbeddedServer | null = null;
    try {
      let url: string;
      if (external !== undefined && external !== '') {
        context.log(`postgres: using the server in ${BENCH_URL_VARIABLE}`);
        url = external;
      } else {
        context.log('postgres: starting an embedded PostgreSQL server (durable: fsync and synchronous_commit on)');
        server = await startEmbeddedServer('bench-postgres', { durable: true });
        url = server.url;
      }
      return await measureOn(context, url, server === null ? 'the server in QUOTAPLANE_BENCH_PG_URL' : 'embedded PostgreSQL');
    } finally {
      // Stops the server and kills the postmaster by the PID in its pid file if it did not stop.
      await server?.dispose();
    }
  },
};

async function measureOn(context: BenchContext, url: string, serverLabel: string): Promise<BenchRow[]> {
  const suffix = randomBytes(4).toString('hex');
  const schema = `quotaplane_bench_${suffix}`;
  const peerSchema = `rlf_bench_${suffix}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const settings = await serverSettings(admin);
    await admin.query(`CREATE SCHEMA "${peerSchema}"`);
    const serverNote = `${serverLabel} ${settings.version}, fsync=${settings.fsync}, synchronous_commit=${settings.synchronousCommit}`;
    const rows: BenchRow[] = [];
    for (const shape of SHAPES) {
      context.log(`postgres: ${shape.label}: quotaplane admit + settle and rate-limiter-flexible consume(), interleaved`);
      rows.push(...(await measureShape(context, url, schema, peerSchema, shape, serverNote)));
    }
    return rows;
  } finally {
    // Only our own two schemas; on an embedded server they go with the data directory anyway.
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS "${peerSchema}" CASCADE`).catch(() => undefined);
    await admin.end().catch(() => undefined);
  }
}

async function serverSettings(admin: pg.Client): Promise<{ version: string; fsync: string; synchronousCommit: string }> {
  const show = async (name: string): Promise<string> => String((await admin.query<Record<string, unknown>>(`SHOW ${name}`)).rows[0]?.[name] ?? '?');
  return { version: await show('server_version'), fsync: await show('fsync'), synchronousCommit: await show('synchronous_commit') };
}

async function measureShape(
  context: BenchContext,
  url: string,
  schema: string,
  peerSchema: string,
  shape: Shape,
  serverNote: string,
): Promise<BenchRow[]> {
  const store = await openPostgresStore(url, { schema, poolSize: shape.callers });
  const peerPool = new pg.Pool({ connectionString: url, max: shape.callers });
  try {
    const tag = `c${shape.callers}t${shape.tenants}`;
    const [cycles, consumes] = await concurrentInterleavedLoops(
      [await admissionCycle(store, tag, shape), await rateLimiterConsume(peerPool, peerSchema, tag, shape)],
      shape.callers,
      context.loopMs,
    );
    const pool = `pool of ${shape.callers}`;
    return [
      {
        section: 'postgres',
        name: `quotaplane admit + settle (cycle), ${shape.label}`,
        ...figures(cycles as ConcurrentResult, 'admit'),
        commitsPerOperation: 2,
        note: `${serverNote}; ${pool}`,
      },
      {
        section: 'postgres',
        name: `rate-limiter-flexible consume(), ${shape.label.replace('tenant', 'key')}`,
        ...figures(consumes as ConcurrentResult, 'consume()'),
        commitsPerOperation: 1,
        note: `RateLimiterPostgres on the same server; ${pool}`,
      },
    ];
  } finally {
    await peerPool.end();
    await store.close();
  }
}

function figures(result: ConcurrentResult, of: string): Pick<BenchRow, 'operations' | 'seconds' | 'perSecond' | 'latency'> {
  return {
    operations: result.operations,
    seconds: result.seconds,
    perSecond: result.seconds > 0 ? Math.round(result.operations / result.seconds) : 0,
    latency: { of, p50Ms: quantileMs(result.latenciesMs, 0.5), p99Ms: quantileMs(result.latenciesMs, 0.99) },
  };
}

/**
 * One admission cycle per call, caller `c` on tenant `c mod tenants`: `admit` (halts, quota, the
 * hold formula, slot and hold decided and written in one transaction under the tenant's lock)
 * then `settle` with `concludes`. Answers the `admit` latency alone. The ceiling of 8 concurrent
 * runs is checked on every admission and never refuses, since each caller holds at most one slot.
 */
async function admissionCycle(store: Awaited<ReturnType<typeof openPostgresStore>>, tag: string, shape: Shape): Promise<CallerCall> {
  const plane = createPlane({ store });
  const tenants = Array.from({ length: shape.tenants }, (_, index) => `bench-${tag}-${index}`);
  for (const tenant of tenants) {
    await plane.setQuota(tenant, { period: 'daily', maxConcurrentRuns: 8, maxTokensPerPeriod: 1_000_000_000_000 });
  }
  const budget = { maxTokens: 2_000, maxCallTokens: 1_000 };
  return async (caller) => {
    const tenant = tenants[caller % tenants.length] as string;
    const started = performance.now();
    const pass = await plane.admit({ tenant, budget, width: 1 });
    const admitMs = performance.now() - started;
    if (!pass.ok) throw new Error(`the bench admission was refused: ${pass.message}`);
    await plane.settle({ tenant, run: pass.run, epoch: pass.epoch, spend: { tokens: 700, minorUnits: 0 }, concludes: true });
    return admitMs;
  };
}

/** rate-limiter-flexible's PostgreSQL limiter: one upsert (one commit) per `consume()`, caller `c` on key `c mod keys`. */
async function rateLimiterConsume(pool: pg.Pool, peerSchema: string, tag: string, shape: Shape): Promise<CallerCall> {
  const limiter = await new Promise<RateLimiterPostgres>((resolve, reject) => {
    const created: RateLimiterPostgres = new RateLimiterPostgres(
      {
        storeClient: pool,
        storeType: 'pool',
        schemaName: peerSchema,
        tableName: 'rlf_bench',
        clearExpiredByTimeout: false,
        // Points are an int4 column: room for every call of a run many times over.
        points: 1_000_000_000,
        duration: 3600,
      },
      (error?: unknown) => (error === undefined || error === null ? resolve(created) : reject(error as Error)),
    );
  });
  const keys = Array.from({ length: shape.tenants }, (_, index) => `bench-${tag}-${index}`);
  return async (caller) => {
    const started = performance.now();
    await limiter.consume(keys[caller % keys.length] as string, 1);
    return performance.now() - started;
  };
}
