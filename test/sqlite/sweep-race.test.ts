import { fork } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { compiledEntry } from '../compiled-entry.js';
import { tempDir, T0 } from '../plane/plane-fixtures.js';
import type { SweepRaceJob, SweepRaceReport } from './sweep-race-worker.js';

const WORKER = fileURLToPath(new URL('./sweep-race-worker.ts', import.meta.url));
const LEASE_MS = 1000;
const RUNS = Array.from({ length: 24 }, (_, index) => `run-${String(index).padStart(2, '0')}`);

// Forks one OS process per job, releases them together from a barrier, and collects their reports.
async function race(jobs: readonly SweepRaceJob[]): Promise<SweepRaceReport[]> {
  const compiled = await compiledEntry(WORKER);
  const children = jobs.map((job) => fork(compiled, [JSON.stringify(job)], { execArgv: [], stdio: 'inherit' }));
  try {
    const ready = children.map((child) => new Promise<void>((resolve, reject) => {
      child.once('message', (message) => (message === 'ready' ? resolve() : reject(new Error(`racer said ${JSON.stringify(message)}`))));
      child.once('exit', (code) => reject(new Error(`racer exited with ${code} before it was ready`)));
    }));
    await Promise.all(ready);
    const reports = children.map((child) => new Promise<SweepRaceReport>((resolve, reject) => {
      child.on('message', (message) => {
        const report = message as SweepRaceReport & { error?: string };
        if (report.error !== undefined) reject(new Error(`racer failed: ${report.error}`));
        else resolve(report);
      });
      child.once('exit', (code) => reject(new Error(`racer exited with ${code} without a report`)));
    }));
    for (const child of children) child.send('go');
    return await Promise.all(reports);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
  }
}

describe('sweeps racing each other and the runners they sweep, across OS processes (docs/design/decisions.md "A dead process strands its run")', () => {
  let dir: { dir: string; remove: () => void };
  let url: string;

  beforeEach(async () => {
    dir = tempDir();
    url = `sqlite:${join(dir.dir, 'race.db')}`;
    const store = await openStore(url);
    const plane = createPlane({ store });
    for (const run of RUNS) await plane.admit({ tenant: 'acme', run, atMs: T0, leaseMs: LEASE_MS });
    await store.close();
  });
  afterEach(() => dir.remove());

  it('three sweepers and a late runner: each lapsed run is either renewed by its heartbeat or swept once, never both', async () => {
    const atMs = T0 + LEASE_MS;
    const reports = await race([
      { role: 'sweep', url, tenant: 'acme', runs: [], atMs },
      { role: 'sweep', url, tenant: 'acme', runs: [], atMs },
      { role: 'sweep', url, tenant: 'acme', runs: [], atMs },
      { role: 'heartbeat', url, tenant: 'acme', runs: RUNS, atMs },
    ]);
    const swept = reports.flatMap((report) => report.swept);
    const beats = new Map(reports.flatMap((report) => report.beats).map((beat) => [beat.run, beat.answer]));

    // No run's slot was released twice, and every run was handled exactly one way.
    expect(new Set(swept).size).toBe(swept.length);
    for (const run of RUNS) {
      const wasSwept = swept.includes(run);
      expect(beats.get(run), run).toBe(wasSwept ? 'CONFLICT' : 'renewed');
    }

    const store = await openStore(url);
    const handle = store.tenant('acme');
    const renewed = RUNS.filter((run) => beats.get(run) === 'renewed');
    expect(await handle.runningRuns(100)).toEqual(renewed);
    const summaries = await handle.runs({ limit: 100 });
    for (const summary of summaries) {
      expect(summary.status, summary.run).toBe(renewed.includes(summary.run) ? 'running' : 'stranded');
    }
    expect((await handle.reservations(100)).length).toBe(0);
    await store.close();
  });
});
