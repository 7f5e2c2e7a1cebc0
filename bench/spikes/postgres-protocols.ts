import { parseArgs } from 'node:util';
import pg from 'pg';
import { monotonicFactory } from 'ulid';

import { startEmbeddedServer } from '../../test/postgres/embedded-server.js';
import { openPostgresStore } from '../../src/store/postgres/postgres-store.js';
import { type CallerCall, concurrentInterleavedLoops, type ConcurrentResult, quantileMs } from '../concurrent-loop.js';
import type { SliceMeter } from '../bench-types.js';
import { perDecision } from '../per-decision.js';
import { postgresMeter } from '../postgres-meter.js';
import { admissionCycle, quotaplanePoolSize, rateLimiterConsume, type Shape } from '../postgres-section.js';
import { loadStatementStatistics } from '../postgres-statement-statistics.js';
import { lockReadDecideWrite, type Protocol, type Via } from './protocols/lock-read-decide-write.js';
import { addTenant, createModel } from './protocols/model.js';
import { decideUntilDone, optimistic } from './protocols/optimistic.js';
import { race } from './protocols/race.js';

// `npx tsx bench/spikes/postgres-protocols.ts [--callers 1,8,64,8:4:2] [--protocols A,B,B-read,B-lock]
// [--seconds 8] [--rounds 8] [--race-seconds 5] [--no-race] [--lanes n]`: a spike, not product
// code. On a durable embedded PostgreSQL it measures the protocols a redesigned store could use to
// decide in TypeScript (docs/benchmarks-postgres-profile.md, "Protocols measured for the
// redesign"): A lock-read-decide-write; B optimistic (B-read: without the tenant cache; B-lock:
// under A's lock after a conflict; A-stmt and B-stmt: effects as a statement, not through
// apply_effects); C the store of today (quota_batch); and rate-limiter-flexible's consume() as the
// peer, all interleaved in short rounds. A shape is callers[:tenants[:instances]], tenants
// defaulting to the callers and instances to 1. With several instances (each its own pool,
// batcher and cache; several stores for C) the callers of one tenant are spread over them, as
// processes sharing a database are. Then it races two instances of A, B and B-lock on one tenant
// and checks that the figures they leave are exact.

const { values } = parseArgs({
  options: {
    callers: { type: 'string', default: '1,8,64,8:4:2' },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '8' },
    'race-seconds': { type: 'string', default: '5' },
    'no-race': { type: 'boolean', default: false },
    protocols: { type: 'string', default: 'A,B,B-read,B-lock' },
    lanes: { type: 'string' },
  },
});

const HOLD_TOKENS = 2_000;
const SPEND_TOKENS = 700;

const print = (line: string): void => void process.stdout.write(`${line}\n`);
const log = (line: string): void => void process.stderr.write(`spike: ${line}\n`);

const server = await startEmbeddedServer('spike-protocols', { durable: true });
try {
  await loadStatementStatistics(server);
  const observer = new pg.Client({ connectionString: server.url });
  await observer.connect();
  observer.on('error', () => undefined); // The server stopping at the end ends it.
  const { meter } = await postgresMeter(observer);
  const version = (await observer.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version;
  print(`PostgreSQL ${version}, embedded, fsync and synchronous_commit on; ${values.seconds} s per contender per shape in ${values.rounds} rounds\n`);
  for (const [callers = 1, tenants = callers, instances = 1] of values.callers.split(',').filter((c) => c !== '').map((c) => c.split(':').map(Number))) {
    const label = `${callers} caller(s), ${tenants} tenant(s)${instances > 1 ? `, ${instances} instances` : ''}`;
    await measureShape(observer, meter, { label, callers, tenants, instances });
  }
  await printHotShare(observer);
  if (!values['no-race']) await raceAll(server.url);
  await observer.end();
} catch (error) {
  log((error as Error).stack ?? String(error));
  process.exitCode = 1;
} finally {
  await server.dispose();
}

/** A shape spread over `instances` instances (each its own pool, batcher and cache): caller c uses instance ⌊c / tenants⌋ mod instances. */
interface SpikeShape extends Shape {
  readonly instances: number;
}

async function measureShape(admin: pg.Client, meter: SliceMeter, shape: SpikeShape): Promise<void> {
  log(`${shape.label}`);
  const poolSize = quotaplanePoolSize(shape.callers / shape.instances);
  // The store's default (defaultBatchSettings) unless --lanes says otherwise; C keeps the store's.
  const lanes = values.lanes === undefined ? Math.max(1, Math.floor(poolSize / 2)) : Number(values.lanes);
  const tag = `c${shape.callers}i${shape.instances}`;
  const pools: pg.Pool[] = [];
  const pool = (max: number): pg.Pool => {
    const made = new pg.Pool({ connectionString: server.url, max });
    pools.push(made);
    return made;
  };
  const instances = Array.from({ length: shape.instances }, (_, index) => index);
  const stores = await Promise.all(instances.map(() => openPostgresStore(server.url, { schema: `spike_c_${tag}`, poolSize })));
  try {
    const contenders: { label: string; call: CallerCall; decisions: number; protocols: Protocol[] }[] = [];
    const via: Via = 'function';
    const spikes: Record<string, [string, (p: pg.Pool, schema: string) => Protocol]> = {
      A: ['A lock-read-decide-write', (p, schema) => lockReadDecideWrite(p, schema, lanes, via)],
      B: ['B optimistic, cached', (p, schema) => optimistic(p, schema, lanes, { cache: true, via })],
      'B-read': ['B-read optimistic, read each batch', (p, schema) => optimistic(p, schema, lanes, { cache: false, via })],
      'B-lock': ['B-lock optimistic, cached, locks on conflict', (p, schema) => optimistic(p, schema, lanes, { cache: true, lockOnConflict: true, via })],
      'A-stmt': ['A-stmt A, effects as a statement planned each time', (p, schema) => lockReadDecideWrite(p, schema, lanes, 'statement')],
      'B-stmt': ['B-stmt B, effects as a prepared statement, no function', (p, schema) => optimistic(p, schema, lanes, { cache: true, via: 'statement' })],
    };
    for (const name of values.protocols.split(',')) {
      const spike = spikes[name];
      if (spike === undefined) throw new Error(`--protocols: no protocol ${name}; name some of ${Object.keys(spikes).join(', ')}`);
      const [label, make] = spike;
      const schema = `spike_${label.split(' ')[0]?.replace('-', '_').toLowerCase()}_${tag}`;
      const protocols = instances.map(() => make(pool(poolSize), schema));
      contenders.push({ label, call: await spikeCycle(server.url, schema, protocols, shape), decisions: 2, protocols });
    }
    contenders.push({ label: 'C today\'s store (quota_batch)', call: await storeCycle(stores, tag, shape), decisions: 2, protocols: [] });
    const peerSchema = `spike_rlf_${tag}`;
    await admin.query(`CREATE SCHEMA ${peerSchema}`);
    contenders.push({ label: 'rlf consume()', call: await rateLimiterConsume(pool(shape.callers), peerSchema, tag, shape), decisions: 1, protocols: [] });
    const results = (await concurrentInterleavedLoops(
      contenders.map((c) => c.call),
      shape.callers,
      Number(values.seconds) * 1000,
      Number(values.rounds),
      shape.callers > 8 ? 5 : 20,
      meter,
    )) as ConcurrentResult[];
    const rate = (r: ConcurrentResult): number => (r.seconds > 0 ? r.operations / r.seconds : 0);
    const peer = rate(results[results.length - 1] as ConcurrentResult);
    print(`\n### ${shape.label} (pool ${poolSize} per instance, ${lanes} lane(s) for A and B)\n`);
    print('| contender | per s | × rlf | admit p50 ms | admit p99 ms | server CPU µs/decision | WAL bytes/decision | statements/decision (top-level; all) | Node CPU µs/decision | decisions/batch | retried batches | batches given up |');
    print('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
    contenders.forEach((contender, index) => {
      const result = results[index] as ConcurrentResult;
      const each = perDecision(result.counters, result.operations, contender.decisions);
      const batches = contender.protocols.reduce((sum, p) => sum + p.batcher.batches, 0);
      const items = contender.protocols.reduce((sum, p) => sum + p.batcher.items, 0);
      const cells = [
        contender.label + (contender.decisions === 2 ? ' (cycles)' : ''),
        rate(result).toFixed(0),
        contender.decisions === 2 ? (rate(result) / peer).toFixed(2) : '1',
        quantileMs(result.latenciesMs, 0.5).toFixed(2),
        quantileMs(result.latenciesMs, 0.99).toFixed(2),
        (each.serverCpuUs ?? 0).toFixed(0),
        (each.walBytes ?? 0).toFixed(0),
        `${(each.statements ?? 0).toFixed(2)}; ${(each.allStatements ?? 0).toFixed(2)}`,
        (each.nodeCpuUs ?? 0).toFixed(0),
        batches > 0 ? (items / batches).toFixed(1) : '',
        contender.protocols.length > 0 ? String(contender.protocols.reduce((sum, p) => sum + p.retries.count, 0)) : '',
        contender.protocols.length > 0 ? String(contender.protocols.reduce((sum, p) => sum + p.gaveUp.count, 0)) : '',
      ];
      print(`| ${cells.join(' | ')} |`);
    });
  } finally {
    await Promise.all(pools.map((p) => p.end()));
    await Promise.all(stores.map((store) => store.close()));
  }
}

/** One admit + settle per call on the caller's tenant (caller c on tenant c mod tenants); answers the admit's ms. */
async function spikeCycle(url: string, schema: string, protocols: readonly Protocol[], shape: SpikeShape): Promise<CallerCall> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await createModel(admin, schema);
    for (let index = 0; index < shape.tenants; index += 1) await addTenant(admin, schema, `t${index}`, 8, 1_000_000_000_000_000);
  } finally {
    await admin.end();
  }
  const nextRun = monotonicFactory();
  return async (caller) => {
    const tenant = `t${caller % shape.tenants}`;
    const protocol = protocols[Math.floor(caller / shape.tenants) % protocols.length] as Protocol;
    const run = `run_${nextRun()}`;
    const started = performance.now();
    const admitted = await decideUntilDone(protocol, { kind: 'admit', tenant, run, holdTokens: HOLD_TOKENS });
    const admitMs = performance.now() - started;
    if (admitted !== 'admitted') throw new Error(`the spike's admission was refused: ${admitted}`);
    const settled = await decideUntilDone(protocol, { kind: 'settle', tenant, run, epoch: 1, spendTokens: SPEND_TOKENS });
    if (settled !== 'settled') throw new Error(`the spike's settle answered ${settled}`);
    return admitMs;
  };
}

/** admissionCycle of bench/postgres-section.ts over several stores on one schema (caller c uses store ⌊c / tenants⌋ mod stores). */
async function storeCycle(stores: readonly Awaited<ReturnType<typeof openPostgresStore>>[], tag: string, shape: SpikeShape): Promise<CallerCall> {
  const calls: CallerCall[] = [];
  for (const store of stores) calls.push(await admissionCycle(store, tag, shape)); // Setting the same quotas again changes nothing.
  return (caller) => (calls[Math.floor(caller / shape.tenants) % calls.length] as CallerCall)(caller);
}

/** How many updates of the spike's tables were HOT (pg_stat_user_tables, as far as the backends have reported them). */
async function printHotShare(client: pg.Client): Promise<void> {
  const { rows } = await client.query(
    `SELECT relname, sum(n_tup_ins)::bigint AS inserts, sum(n_tup_upd)::bigint AS updates, sum(n_tup_hot_upd)::bigint AS hot
       FROM pg_stat_user_tables WHERE schemaname LIKE 'spike\\_a\\_%' OR schemaname LIKE 'spike\\_b%' GROUP BY relname ORDER BY relname`,
  );
  print('\nHOT updates of the reshaped tables (A and B, every shape):\n\n| table | inserts | updates | of them HOT |\n|---|--:|--:|--:|');
  for (const row of rows) print(`| ${row.relname} | ${row.inserts} | ${row.updates} | ${((Number(row.hot) / Math.max(1, Number(row.updates))) * 100).toFixed(1)} % |`);
}

async function raceAll(url: string): Promise<void> {
  const seconds = Number(values['race-seconds']);
  const reports = [
    await race(url, 'spike_race_a', 'A lock-read-decide-write', (p) => lockReadDecideWrite(p, 'spike_race_a', 2, 'function'), seconds),
    await race(url, 'spike_race_b', 'B optimistic, cached', (p) => optimistic(p, 'spike_race_b', 2, { cache: true, via: 'function' }), seconds),
    await race(url, 'spike_race_bl', 'B-lock', (p) => optimistic(p, 'spike_race_bl', 2, { cache: true, lockOnConflict: true, via: 'function' }), seconds),
  ];
  print('\nRace: two instances (own pool, batcher, cache), 16 callers, one tenant of 4 runs and 100,000 tokens; every settle replayed by the other instance\n');
  print('| protocol | admitted | refused | settled (replays not counted) | retried batches | batches given up | most runs held | exact |\n|---|--:|---|--:|--:|--:|--:|---|');
  for (const r of reports) {
    const refused = Object.entries(r.refused).map(([code, count]) => `${code} ${count}`).join(', ');
    print(`| ${r.label} | ${r.admitted} | ${refused} | ${r.settled} | ${r.retries} | ${r.gaveUp} | ${r.mostRunning} | ${r.failures.length === 0 ? 'yes' : `NO: ${r.failures.slice(0, 3).join('; ')}`} |`);
    if (r.failures.length > 0) process.exitCode = 1;
  }
}
