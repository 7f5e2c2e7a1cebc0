// Does `quotaplane serve` leak? Starts serve on a fresh SQLite file with the V8 inspector on,
// drives it with many concurrent clients (admission cycles over several tenants, with refusals)
// for a while, and reads its memory before, during and after the load: the heap used after a
// forced full collection (what the process still holds: a leak makes it climb with the work done),
// and RSS as found and after that collection (what the OS has lent it). After the load it leaves
// the process alone for a while and reads RSS without collecting, to show what it gives back by
// itself. See docs/guides/operating.md ("Memory") for what the figures mean and the latest ones.
//
//   npm run serve-memory                                   # 3 minutes, 200 clients, from the sources
//   npm run serve-memory -- --minutes 10 --built           # dist/cli/bin.js (npm run build first)
//   npm run serve-memory -- --json                         # one JSON document with every reading
//   npm run serve-memory -- --fresh-tenant-clients 20      # 20 clients admit each run in a new tenant
//   npm run serve-memory -- --snapshots /tmp/snaps         # heap snapshots: start, mid-load, after
//
// Other flags: --clients (200), --sample-seconds (30), --idle-seconds (60), --scrape-seconds (15;
// 0: never read /metrics).
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { getGlobalDispatcher } from 'undici';

import { connectInspector, type MemoryUsage } from './inspector.js';
import { prepareLoad, type LoadCounts } from './load.js';
import { startServe } from './serve-process.js';

const { values: flags } = parseArgs({
  options: {
    minutes: { type: 'string', default: '3' },
    clients: { type: 'string', default: '200' },
    'sample-seconds': { type: 'string', default: '30' },
    'idle-seconds': { type: 'string', default: '60' },
    'scrape-seconds': { type: 'string', default: '15' },
    'fresh-tenant-clients': { type: 'string', default: '0' },
    snapshots: { type: 'string' },
    built: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});

const numberFlag = (name: string, text: string | undefined, min: number): number => {
  const value = Number(text);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name}: must be a number of at least ${min}, got ${text}`);
  return value;
};
const loadMs = numberFlag('minutes', flags.minutes, 0.1) * 60_000;
const clients = Math.floor(numberFlag('clients', flags.clients, 1));
const sampleMs = numberFlag('sample-seconds', flags['sample-seconds'], 1) * 1000;
const idleMs = numberFlag('idle-seconds', flags['idle-seconds'], 0) * 1000;
const scrapeMs = numberFlag('scrape-seconds', flags['scrape-seconds'], 0) * 1000;
const freshTenantClients = Math.floor(numberFlag('fresh-tenant-clients', flags['fresh-tenant-clients'], 0));

/**
 * One reading: the phase, when (s since the load started), the cycles done by then, memory as
 * found, and memory after a forced full collection (`null` where the phase reads without
 * collecting, to see what the process does by itself).
 */
interface Reading {
  readonly phase: 'start' | 'load' | 'load ended' | 'idle' | 'idle, GC';
  readonly atSeconds: number;
  readonly cycles: number;
  readonly asFound: MemoryUsage;
  readonly afterGc: MemoryUsage | null;
}

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const directory = mkdtempSync(join(tmpdir(), 'quotaplane-serve-memory-'));
const serve = await startServe({ repoRoot, directory, built: flags.built });
const inspector = await connectInspector(serve.inspectorUrl);
const readings: Reading[] = [];
let loadStartedAt = performance.now();
const read = async (phase: Reading['phase'], counts: LoadCounts | null, collect: boolean): Promise<void> => {
  const asFound = await inspector.memory();
  const reading: Reading = {
    phase,
    atSeconds: Math.round((performance.now() - loadStartedAt) / 100) / 10,
    cycles: counts?.cycles ?? 0,
    asFound,
    afterGc: collect ? await inspector.memoryAfterGc() : null,
  };
  readings.push(reading);
  if (!flags.json) printReading(reading);
};
const snapshot = async (name: string): Promise<void> => {
  if (flags.snapshots === undefined) return;
  mkdirSync(flags.snapshots, { recursive: true });
  await inspector.heapSnapshot(join(flags.snapshots, `${name}.heapsnapshot`));
};

try {
  if (!flags.json) {
    console.log(`serve-memory: ${clients} clients for ${loadMs / 60_000} min on ${serve.url} (store in ${directory}), a reading every ${sampleMs / 1000} s`);
    console.log(`${''.padEnd(30)}${'after a full GC'.padEnd(30)}as found`);
    console.log(`${'phase'.padEnd(12)}${'at s'.padStart(7)}${'cycles'.padStart(9)}  ${'heap used'.padStart(9)}${'heap total'.padStart(11)}${'RSS'.padStart(8)}  ${'heap used'.padStart(9)}${'heap total'.padStart(11)}${'RSS'.padStart(8)}`);
  }
  // The setup (quotas, keys) and a short untimed burst warm the server up, so lazy one-time work
  // (compiled code, prepared statements, pools) is not counted as growth.
  const prepared = await prepareLoad({ url: serve.url, operatorKey: serve.operatorKey, clients, freshTenantClients, scrapeEveryMs: scrapeMs });
  const warmup = prepared.start();
  await sleep(5_000);
  await warmup.stop();
  loadStartedAt = performance.now();
  await read('start', null, true);
  await snapshot('start');

  const load = prepared.start();
  loadStartedAt = performance.now();
  const endAt = loadStartedAt + loadMs;
  let midSnapshotTaken = false;
  while (performance.now() + sampleMs < endAt) {
    await sleep(sampleMs);
    await read('load', load.counts, true);
    if (!midSnapshotTaken && performance.now() >= loadStartedAt + loadMs / 2) {
      midSnapshotTaken = true;
      await snapshot('mid-load');
    }
  }
  await sleep(Math.max(0, endAt - performance.now()));
  await load.stop();
  // The clients' keep-alive connections are closed, as callers going away would.
  await getGlobalDispatcher().close();
  await read('load ended', load.counts, false);
  const idleStepMs = Math.min(15_000, idleMs);
  for (let idled = 0; idleStepMs > 0 && idled + idleStepMs <= idleMs; idled += idleStepMs) {
    await sleep(idleStepMs);
    await read('idle', load.counts, false);
  }
  await read('idle, GC', load.counts, true);
  await snapshot('after');
  report(load.counts);
} finally {
  inspector.close();
  await serve.stop();
  rmSync(directory, { recursive: true, force: true });
}

function mb(bytes: number): number {
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}

function printReading(reading: Reading): void {
  const columns = (usage: MemoryUsage | null) =>
    usage === null ? ''.padStart(28) : `${mb(usage.heapUsed).toFixed(1).padStart(9)}${mb(usage.heapTotal).toFixed(1).padStart(11)}${mb(usage.rss).toFixed(1).padStart(8)}`;
  console.log(
    `${reading.phase.padEnd(12)}${reading.atSeconds.toFixed(0).padStart(7)}${String(reading.cycles).padStart(9)}  ${columns(reading.afterGc)}  ${columns(reading.asFound)}`,
  );
}

/** Least-squares slope of heap used after GC against time over the readings under load, in MB per minute. */
function heapSlopeMbPerMinute(): number | null {
  const points = readings.filter((reading) => reading.phase === 'load' && reading.afterGc !== null);
  if (points.length < 3) return null;
  const xs = points.map((point) => point.atSeconds / 60);
  const ys = points.map((point) => (point.afterGc as MemoryUsage).heapUsed / 1024 / 1024);
  const meanX = xs.reduce((a, b) => a + b, 0) / xs.length;
  const meanY = ys.reduce((a, b) => a + b, 0) / ys.length;
  let numerator = 0;
  let denominator = 0;
  for (const [index, x] of xs.entries()) {
    numerator += (x - meanX) * ((ys[index] as number) - meanY);
    denominator += (x - meanX) ** 2;
  }
  return denominator === 0 ? null : numerator / denominator;
}

function report(counts: LoadCounts): void {
  const collected = (phase: Reading['phase']) => readings.filter((reading) => reading.phase === phase).map((reading) => reading.afterGc as MemoryUsage);
  const [start] = collected('start') as [MemoryUsage];
  const underLoad = collected('load').map((usage) => usage.heapUsed);
  const [end] = collected('idle, GC') as [MemoryUsage];
  const loadEnded = readings.find((reading) => reading.phase === 'load ended') as Reading;
  const lastIdle = [...readings].reverse().find((reading) => reading.phase === 'idle') ?? loadEnded;
  const slope = heapSlopeMbPerMinute();
  const summary = {
    clients,
    loadMinutes: loadMs / 60_000,
    cycles: counts.cycles,
    cyclesPerSecond: Math.round(counts.cycles / (loadMs / 1000)),
    refusals: counts.refusals,
    faults: counts.faults,
    scrapes: counts.scrapes,
    serveLogLines: serve.logLines,
    storeMb: mb(statSync(join(directory, 'quotaplane.db')).size),
    heapUsedAfterGcMb: {
      start: mb(start.heapUsed),
      underLoad: underLoad.length === 0 ? null : { min: mb(Math.min(...underLoad)), max: mb(Math.max(...underLoad)) },
      end: mb(end.heapUsed),
    },
    heapTrendUnderLoadMbPerMinute: slope === null ? null : Math.round(slope * 1000) / 1000,
    rssMb: {
      start: mb(start.rss),
      peakAsFound: mb(Math.max(...readings.map((reading) => reading.asFound.rss))),
      loadEnded: mb(loadEnded.asFound.rss),
      idleAsFound: mb(lastIdle.asFound.rss),
      endAfterGc: mb(end.rss),
    },
    readings,
  };
  if (flags.json) {
    console.log(JSON.stringify(summary, null, 2));
    return;
  }
  console.log(
    `cycles: ${counts.cycles} (${summary.cyclesPerSecond}/s); refusals ${JSON.stringify(counts.refusals)}; faults ${JSON.stringify(counts.faults)}; ` +
      `/metrics read ${counts.scrapes} times; serve's log lines ${JSON.stringify(serve.logLines)}; store ${summary.storeMb} MB`,
  );
  const load = summary.heapUsedAfterGcMb.underLoad;
  console.log(
    `heap used after GC: ${summary.heapUsedAfterGcMb.start} MB at the start, ${load === null ? '–' : `${load.min}–${load.max}`} MB under load, ${summary.heapUsedAfterGcMb.end} MB at the end` +
      (slope === null ? '' : `; trend under load ${slope >= 0 ? '+' : ''}${slope.toFixed(3)} MB/min`),
  );
  console.log(
    `RSS: ${summary.rssMb.start} MB at the start, ${summary.rssMb.peakAsFound} MB at the peak, ${summary.rssMb.loadEnded} MB as the load ended, ` +
      `${summary.rssMb.idleAsFound} MB after ${idleMs / 1000} s idle (no forced GC), ${summary.rssMb.endAfterGc} MB after a forced GC`,
  );
}
