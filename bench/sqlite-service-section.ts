import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { request } from 'undici';

import { createClient } from '../src/client/create-client.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { type CallerCall, concurrentInterleavedLoops, concurrentRow, type ConcurrentResult, quantileMs } from './concurrent-loop.js';

const CHILD = fileURLToPath(new URL('./serve-child.ts', import.meta.url));
const TENANT = 'bench-serve';
const CLIENTS = 64;
const WRITERS = 200;
/**
 * Writes (cycles or consumes) each writer completes before the first new client is timed. Node
 * (libuv ≥ 1.45) accepts one connection per turn of the server's event loop, so the writers' own
 * connections trickle in for a while after they start; a new client timed before they are all
 * accepted would wait in the same accept queue behind them, and the figure would be the writers'
 * start rather than the server's answer to a newcomer among 200 busy clients.
 */
const WARM_UP_WRITES_EACH = 2;
/** New clients timed while the writers write, one every 25 ms. */
const PROBES = 20;

interface Ports {
  readonly quotaplane: number;
  readonly trivial: number;
  readonly peer: number;
  readonly secret: string;
}

/**
 * The service section (docs/benchmarks.md#the-sections), against a forked `serve`-like process on a
 * durable SQLite file: 64 keep-alive clients doing admission cycles, next to a trivial Fastify
 * route and a Fastify route around rate-limiter-flexible's `consume()`, interleaved; `/healthz`
 * while another process holds the write lock and a decision waits for it; and a new client's first
 * answer while 200 clients write. Each against the rlf route in the same run.
 */
export const sqliteServiceSection: BenchSection = {
  name: 'sqlite-service',
  async run(context: BenchContext): Promise<BenchRow[]> {
    const directory = await mkdtemp(join(tmpdir(), 'quotaplane-bench-serve-'));
    const child = fork(CHILD, [directory], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    try {
      const ports = await readPorts(child);
      const client = createClient({ url: `http://127.0.0.1:${ports.quotaplane}`, key: ports.secret });
      const rows: BenchRow[] = [];

      context.log(`sqlite-service: ${CLIENTS} keep-alive clients: quotaplane cycle, trivial route, rlf consume route, interleaved`);
      const budget = { maxTokens: 2_000, maxCallTokens: 1_000 };
      const cycle: CallerCall = async () => {
        const started = performance.now();
        const pass = await client.admit({ tenant: TENANT, budget, width: 1 });
        const admitMs = performance.now() - started;
        if (!pass.ok) throw new Error(`the bench admission was refused: ${pass.message}`);
        await client.settle({ tenant: TENANT, run: pass.run, epoch: pass.epoch, spend: { tokens: 700, minorUnits: 0 }, concludes: true });
        return admitMs;
      };
      const trivial: CallerCall = async () => timed(`http://127.0.0.1:${ports.trivial}/ping`, 'GET');
      const consume: CallerCall = async (caller) => timed(`http://127.0.0.1:${ports.peer}/consume/c${caller}`, 'POST');
      const [cycles, pings, consumes] = (await concurrentInterleavedLoops([cycle, trivial, consume], CLIENTS, context.loopMs, 5, 10)) as [
        ConcurrentResult,
        ConcurrentResult,
        ConcurrentResult,
      ];
      const requestRate = (2 * cycles.operations) / cycles.seconds / (pings.operations / pings.seconds);
      rows.push(
        concurrentRow('sqlite-service', `HTTP admit + settle (cycle), ${CLIENTS} clients`, cycles, 2, 'admit', `${(requestRate * 100).toFixed(0)} % of the trivial route's request rate (2 requests a cycle); ${ratio(cycles, consumes)}× rlf consumes/s`),
        concurrentRow('sqlite-service', `trivial Fastify route, ${CLIENTS} clients`, pings, null, 'GET', 'GET /ping answering {ok:true}'),
        concurrentRow('sqlite-service', `rlf consume() route, ${CLIENTS} clients`, consumes, 1, 'POST', 'Fastify route around RateLimiterSQLite, same pragmas'),
      );

      context.log('sqlite-service: /healthz while another process holds the write lock');
      rows.push(await healthzUnderLock('quotaplane', join(directory, 'quotaplane.db'), ports.quotaplane, () => client.admit({ tenant: TENANT, budget, width: 1 })));
      rows.push(await healthzUnderLock('rlf route', join(directory, 'rate-limiter-flexible.db'), ports.peer, () => timed(`http://127.0.0.1:${ports.peer}/consume/locked`, 'POST')));

      context.log(`sqlite-service: a new client's first answer while ${WRITERS} clients write`);
      rows.push(await newClientUnderLoad('quotaplane', ports.quotaplane, cycle));
      rows.push(await newClientUnderLoad('rlf route', ports.peer, consume));
      return rows;
    } finally {
      child.kill();
      await rm(directory, { recursive: true, force: true });
    }
  },
};

async function readPorts(child: ChildProcess): Promise<Ports> {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const line = text.split('\n')[0];
      if (text.includes('\n') && line !== undefined) resolve(JSON.parse(line) as Ports);
    });
    child.once('exit', (code) => reject(new Error(`the bench server exited with ${code}`)));
  });
}

async function timed(url: string, method: 'GET' | 'POST'): Promise<number> {
  const started = performance.now();
  const answer = await request(url, { method });
  await answer.body.text();
  if (answer.statusCode !== 200) throw new Error(`${method} ${url} answered ${answer.statusCode}`);
  return performance.now() - started;
}

/** GET `/healthz` on a fresh TCP connection; answers the ms until the whole answer was read. */
function firstAnswerMs(port: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const sent = get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (response) => {
      response.resume();
      response.once('end', () => resolve(performance.now() - started));
    });
    sent.once('error', reject);
  });
}

/** A child process that takes `path`'s write lock and holds it until `release()`. */
async function holdWriteLock(path: string): Promise<() => Promise<void>> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('BEGIN IMMEDIATE');
    process.stdout.write('locked\\n');
    process.stdin.once('data', () => { db.exec('COMMIT'); db.close(); process.exit(0); });
  `;
  const holder = spawn(process.execPath, ['-e', script, path], { cwd: fileURLToPath(new URL('../', import.meta.url)), stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    holder.stdout?.once('data', () => resolve());
    holder.once('exit', (code) => reject(new Error(`the lock holder exited with ${code}`)));
  });
  return () =>
    new Promise<void>((resolve) => {
      holder.once('exit', () => resolve());
      holder.stdin?.write('go\n');
    });
}

// Holds the file's write lock in another process, starts one decision that must wait for it,
// and times /healthz on fresh connections meanwhile (for up to 2 s, or until the decision ends:
// the rlf route's process is frozen while its consume waits, so its first probe is the figure).
async function healthzUnderLock(who: string, path: string, port: number, decide: () => Promise<unknown>): Promise<BenchRow> {
  const release = await holdWriteLock(path);
  const latencies: number[] = [];
  const started = performance.now();
  let decided = false;
  const decision = decide().then(
    () => (decided = true),
    () => (decided = true),
  );
  try {
    await new Promise((resolve) => setTimeout(resolve, 20));
    while (!decided && performance.now() - started < 2000) latencies.push(await firstAnswerMs(port));
  } finally {
    await release();
  }
  await decision;
  const seconds = (performance.now() - started) / 1000;
  return {
    section: 'sqlite-service',
    name: `/healthz while another process holds the lock, ${who}`,
    operations: latencies.length,
    seconds,
    perSecond: Math.round(latencies.length / seconds),
    commitsPerOperation: null,
    latency: { of: '/healthz', p50Ms: quantileMs(latencies, 0.5), p99Ms: quantileMs(latencies, 0.99) },
    note: who === 'quotaplane' ? 'an admission waits for the lock meanwhile (busy timeout 5 s)' : 'a consume waits for the lock meanwhile (busy timeout 5 s)',
  };
}

// 200 writers cycle on the server; a new client connects every 25 ms and times its first answer.
// The writers run in this process, as callers of a real server would run elsewhere: on a 2-core
// machine their CPU competes with the server's.
async function newClientUnderLoad(who: string, port: number, write: CallerCall): Promise<BenchRow> {
  let writing = true;
  let writes = 0;
  const writesOf = new Array<number>(WRITERS).fill(0);
  const writers = Array.from({ length: WRITERS }, async (_, caller) => {
    while (writing) {
      await write(caller);
      writes += 1;
      writesOf[caller] = (writesOf[caller] ?? 0) + 1;
    }
  });
  const latencies: number[] = [];
  const started = performance.now();
  try {
    // Past the start, when all 200 connect at once and the server's code is still cold: every
    // writer has a connection and has written (see WARM_UP_WRITES_EACH).
    while (writesOf.some((count) => count < WARM_UP_WRITES_EACH)) await new Promise((resolve) => setTimeout(resolve, 10));
    const probes: Promise<number>[] = [];
    for (let index = 0; index < PROBES; index += 1) {
      probes.push(firstAnswerMs(port));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    latencies.push(...(await Promise.all(probes)));
  } finally {
    writing = false;
    await Promise.all(writers);
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    section: 'sqlite-service',
    name: `new client's first answer, ${WRITERS} clients writing, ${who}`,
    operations: latencies.length,
    seconds,
    perSecond: Math.round(writes / seconds),
    commitsPerOperation: null,
    latency: { of: 'first GET', p50Ms: quantileMs(latencies, 0.5), p99Ms: quantileMs(latencies, 0.99) },
    note: `per second = the writers' ${who === 'quotaplane' ? 'cycles' : 'consumes'} meanwhile`,
  };
}

function ratio(a: ConcurrentResult, b: ConcurrentResult): string {
  return (a.operations / a.seconds / (b.operations / b.seconds)).toFixed(2);
}
