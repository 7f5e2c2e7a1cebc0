import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { compiledEntry } from '../compiled-entry.js';
import { BACKENDS } from './backends.js';
import { tempDir } from './plane-fixtures.js';
import type { FifoJob, FifoReport } from './wait-fifo-worker.js';

const WORKER = fileURLToPath(new URL('./wait-fifo-worker.ts', import.meta.url));
const PROCESSES = 4;
const RUNS_PER_PROCESS = 3;
const TENANT = 'acme';

// "FIFO within a tenant across 4 processes (SQLite) and 4 instances (PostgreSQL)": twelve
// waiters from four OS processes race into one tenant's queue behind a ceiling of 1, and the
// grants must follow the order they joined, across every process, never beyond the ceiling; an
// admission that does not wait, made while they wait, never goes first.

function message(child: ChildProcess): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`waiter exited with ${code}`));
    child.once('exit', onExit);
    child.once('message', (received) => {
      child.removeListener('exit', onExit);
      const body = received as Record<string, unknown>;
      if (typeof body.error === 'string') reject(new Error(`waiter failed: ${body.error}`));
      else resolve(body);
    });
  });
}

const dirs: (() => void)[] = [];
afterAll(() => {
  for (const remove of dirs) remove();
});

describe.each(BACKENDS)('waiting admissions across $name processes', ({ name, fresh }) => {
  it('W20: grants follow the order of joining across 4 processes, within the ceiling; non-waiting arrivals never go first', { timeout: 120_000 }, async () => {
    const shared = await fresh('wait-fifo');
    const temp = tempDir();
    dirs.push(temp.remove);
    const log = join(temp.dir, 'grants.log');
    writeFileSync(log, '');
    const store = await openStore(shared.url, shared.options);
    const children: ChildProcess[] = [];
    try {
      const plane = createPlane({ store });
      await plane.setQuota(TENANT, { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
      const blocker = await plane.admit({ tenant: TENANT, run: 'run-blocker' });
      expect(blocker.ok).toBe(true);
      for (let p = 0; p < PROCESSES; p += 1) {
        const job: FifoJob = {
          url: shared.url,
          options: shared.options,
          tenant: TENANT,
          runs: Array.from({ length: RUNS_PER_PROCESS }, (_, i) => `run-p${p}-w${i}`),
          log,
          holdMs: 15,
        };
        children.push(fork(await compiledEntry(WORKER), [JSON.stringify(job)], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
      }
      const joined = await Promise.all(children.map((child) => message(child)));
      const places = joined.flatMap((body) => body.places as { run: string; position: number }[]);
      // Everyone joined while the blocker held the only slot: the places are 1 … 12, each once.
      expect(places.map((place) => place.position).sort((a, b) => a - b)).toEqual(
        Array.from({ length: PROCESSES * RUNS_PER_PROCESS }, (_, i) => i + 1),
      );
      const finished = children.map((child) => message(child));
      for (const child of children) child.send('go');
      await plane.settle({ tenant: TENANT, run: 'run-blocker', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
      // Interlopers: admissions that do not wait, while the queue drains. One may only be admitted
      // once every waiter was granted (the last logs itself before it concludes).
      let interlopers = 0;
      let done = false;
      const reports = Promise.all(finished).finally(() => {
        done = true;
      });
      while (!done) {
        interlopers += 1;
        const run = `run-interloper-${interlopers}`;
        const answer = await plane.admit({ tenant: TENANT, run });
        if (answer.ok) {
          expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(PROCESSES * RUNS_PER_PROCESS);
          await plane.settle({ tenant: TENANT, run, epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
        } else {
          expect(answer.refusal.code).toBe('TooManyRuns');
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const done_ = (await reports).map((body) => body.done as FifoReport);
      const order = readFileSync(log, 'utf8').trim().split('\n');
      const placeOf = new Map(places.map((place) => [place.run, place.position]));
      expect(order.map((run) => placeOf.get(run))).toEqual(Array.from({ length: PROCESSES * RUNS_PER_PROCESS }, (_, i) => i + 1));
      expect(Math.max(...done_.map((report) => report.mostRunning))).toBeLessThanOrEqual(1);
      expect(interlopers).toBeGreaterThan(0);
      expect(await store.tenant(TENANT).waitQueue({ atMs: Date.now() })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
      expect(name).toBeTruthy();
    } finally {
      for (const child of children) if (child.exitCode === null) child.kill();
      await store.close();
      await shared.remove();
    }
  });
});
