import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { RateLimiterPostgres } from 'rate-limiter-flexible';

import { createPlane } from '../src/plane/create-plane.js';
import { openPostgresStore } from '../src/store/postgres/postgres-store.js';
import { startEmbeddedServer, type EmbeddedServer } from '../test/postgres/embedded-server.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { type CallerCall, concurrentInterleavedLoops, type ConcurrentResult, quantileMs } from './concurrent-loop.js';
import { perDecision } from './per-decision.js';
import { postgresMeter } from './postgres-meter.js';
import { loadStatementStatistics } from './postgres-statement-statistics.js';
import type { SliceMeter } from './bench-types.js';

/** Set to a connection URL to bench an existing server instead of an embedded one. */
const BENCH_URL_VARIABLE = 'QUOTAPLANE_BENCH_PG_URL';

/** How many callers run at once, and over how many tenants (quotaplane) or keys (the peer). */
export interface Shape {
  readonly label: string;
  readonly callers: number;
  readonly tenants: number;
}

// The concurrency users run: one caller; eight on eight tenants; sixty-four on
// eight tenants (eight callers per tenant, whose decisions serialise on its lock and share its
// batches); sixty-four on sixty-four tenants (one each). The peer gets the same callers on as many
// keys.
const SHAPES: readonly Shape[] = [
  { label: '1 caller', callers: 1, tenants: 1 },
  { label: '8 callers, 8 tenants', callers: 8, tenants: 8 },
  { label: '64 callers, 8 tenants', callers: 64, tenants: 8 },
  { label: '64 callers, 64 tenants', callers: 64, tenants: 64 },
];

/**
 * quotaplane's pool: batching lets a few connections carry many callers (see docs/guides/postgresql.md,
 * pool sizing), so it gets up to 8. The peer issues one query per call, so it gets a
 * connection per caller, its best setting.
 */
export function quotaplanePoolSize(callers: number): number {
  return Math.min(8, Math.max(4, callers));
}

/** How many dispatches a grant's window holds before the rate-window measurement starts. */
const WINDOW_CONTENTS = [0, 10_000, 100_000] as const;

/**
 * The PostgreSQL section (docs/benchmarks.md#the-sections): quotaplane's admission cycle per second
 * with 1, 8 and 64 concurrent callers, interleaved with rate-limiter-flexible's
 * `RateLimiterPostgres.consume()` at the same concurrency on the same server, with the ratio
 * (cycles/s over consumes/s) and p50/p99 of `admit` (and of `consume()`); then one `reserveRate`
 * under a ceiling of 10,000,000 a day with 0, 10,000 and 100,000 dispatches already in its window,
 * interleaved. It starts its own embedded PostgreSQL with durable settings (fsync and
 * synchronous_commit on), or uses `QUOTAPLANE_BENCH_PG_URL`; there it works in two fresh schemas
 * and drops them at the end. Every row also gets its costs per decision (see `postgres-meter.ts`):
 * the embedded server loads pg_stat_statements for them. `--quick` leaves out the 64-caller shape
 * and the rate windows.
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
        await loadStatementStatistics(server);
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
    // The meter has a connection of its own: the admin one seeds the rate windows.
    const observer = new pg.Client({ connectionString: url });
    await observer.connect();
    try {
      const { meter, statementSource, serverCpu } = await postgresMeter(observer);
      context.log(`postgres: statements per decision from ${statementSource}; server CPU ${serverCpu ? 'from /proc' : 'not readable here'}`);
      const rows: BenchRow[] = [];
      for (const shape of context.quick ? SHAPES.filter((s) => s.callers <= 8) : SHAPES) {
        context.log(`postgres: ${shape.label}: quotaplane admit + settle and rate-limiter-flexible consume(), interleaved`);
        rows.push(...(await measureShape(context, url, schema, peerSchema, shape, serverNote, meter)));
      }
      if (!context.quick) {
        context.log(`postgres: one dispatch with ${WINDOW_CONTENTS.join(', ')} dispatches in its window, interleaved`);
        rows.push(...(await measureRateWindows(context, url, schema, admin, serverNote, meter)));
      }
      return rows;
    } finally {
      await observer.end().catch(() => undefined);
    }
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
  meter: SliceMeter,
): Promise<BenchRow[]> {
  const poolSize = quotaplanePoolSize(shape.callers);
  const store = await openPostgresStore(url, { schema, poolSize });
  const peerPool = new pg.Pool({ connectionString: url, max: shape.callers });
  try {
    const tag = `c${shape.callers}t${shape.tenants}`;
    const [cycles, consumes] = (await concurrentInterleavedLoops(
      [await admissionCycle(store, tag, shape), await rateLimiterConsume(peerPool, peerSchema, tag, shape)],
      shape.callers,
      context.loopMs,
      5,
      shape.callers > 8 ? 5 : 20,
      meter,
    )) as [ConcurrentResult, ConcurrentResult];
    const ratio = consumes.operations > 0 && cycles.seconds > 0 ? cycles.operations / cycles.seconds / (consumes.operations / consumes.seconds) : 0;
    return [
      {
        section: 'postgres',
        name: `quotaplane admit + settle (cycle), ${shape.label}`,
        ...figures(cycles, 'admit'),
        commitsPerOperation: 2,
        perDecision: perDecision(cycles.counters, cycles.operations, 2),
        note: `${ratio.toFixed(2)}× rlf consumes/s; batched decisions, pool of ${poolSize}; ${serverNote}`,
      },
      {
        section: 'postgres',
        name: `rate-limiter-flexible consume(), ${shape.label.replace('tenants', 'keys').replace('tenant', 'key')}`,
        ...figures(consumes, 'consume()'),
        commitsPerOperation: 1,
        perDecision: perDecision(consumes.counters, consumes.operations, 1),
        note: `RateLimiterPostgres on the same server; pool of ${shape.callers}`,
      },
    ];
  } finally {
    await peerPool.end();
    await store.close();
  }
}

/**
 * One `reserveRate` per call on grants whose windows already hold 0, 10,000 and 100,000
 * dispatches (written in one statement each, numbered as the store numbers them, the newest at the
 * start), under a ceiling of 10,000,000 a day, so every call is judged and recorded. The three run
 * interleaved from one caller; the note gives each one's cost against the empty window's.
 */
async function measureRateWindows(
  context: BenchContext,
  url: string,
  schema: string,
  admin: pg.Client,
  serverNote: string,
  meter: SliceMeter,
): Promise<BenchRow[]> {
  const store = await openPostgresStore(url, { schema });
  try {
    const tenant = 'bench-rate';
    const startMs = Date.now();
    const ceilings = [{ count: 10_000_000, windowSeconds: 86_400 }];
    const calls: CallerCall[] = [];
    for (const contents of WINDOW_CONTENTS) {
      const grant = `tool://bench/window-${contents}`;
      if (contents > 0) {
        await admin.query(
          `INSERT INTO "${schema}".quota_rate (tenant, grant_ref, ordinal, run_id, dispatch, reserved_at_ms)
           SELECT $1, $2, i, 'seed', 's' || i, $3::bigint - $4::bigint + i FROM generate_series(1, $4::bigint) AS i`,
          [tenant, grant, startMs, contents],
        );
        await admin.query(
          `INSERT INTO "${schema}".quota_rate_grants (tenant, grant_ref, last_ordinal, last_at_ms) VALUES ($1, $2, $3, $4)`,
          [tenant, grant, contents, startMs],
        );
      }
      let next = 0;
      const handle = store.tenant(tenant);
      calls.push(async () => {
        next += 1;
        const started = performance.now();
        const outcome = await handle.reserveRate({ grant, run: 'bench', dispatch: `d${next}`, ceilings, atMs: Date.now(), exempt: false });
        if (!outcome.ok) throw new Error(`the bench dispatch was refused: ${outcome.refusal.code}`);
        return performance.now() - started;
      });
    }
    await admin.query(`ANALYZE "${schema}".quota_rate`);
    const results = (await concurrentInterleavedLoops(calls, 1, context.loopMs, 5, 50, meter)) as ConcurrentResult[];
    const emptyUs = results[0] !== undefined && results[0].operations > 0 ? (results[0].seconds * 1e6) / results[0].operations : 0;
    return WINDOW_CONTENTS.map((contents, index) => {
      const result = results[index] as ConcurrentResult;
      const eachUs = result.operations > 0 ? (result.seconds * 1e6) / result.operations : 0;
      return {
        section: 'postgres',
        name: `quotaplane reserveRate, ${contents.toLocaleString('en-US')} dispatches in the window`,
        ...figures(result, 'reserveRate'),
        commitsPerOperation: 1,
        perDecision: perDecision(result.counters, result.operations, 1),
        note: `${emptyUs > 0 ? (eachUs / emptyUs).toFixed(2) : '?'}× the empty window's time; ceiling 10,000,000 a day; ${serverNote}`,
      };
    });
  } finally {
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
export async function admissionCycle(store: Awaited<ReturnType<typeof openPostgresStore>>, tag: string, shape: Shape): Promise<CallerCall> {
  const plane = createPlane({ store });
  const tenants = Array.from({ length: shape.tenants }, (_, index) => `bench-${tag}-${index}`);
  for (const tenant of tenants) {
    await plane.setQuota(tenant, { period: 'daily', maxConcurrentRuns: 8, maxTokensPerPeriod: 1_000_000_000_000 }, { newTenant: true });
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
export async function rateLimiterConsume(pool: pg.Pool, peerSchema: string, tag: string, shape: Shape): Promise<CallerCall> {
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
