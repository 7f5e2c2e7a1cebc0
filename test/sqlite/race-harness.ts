import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { compiledEntry } from '../compiled-entry.js';
import type { RaceJob, RaceReport } from './sqlite-race-worker.js';

const WORKER = fileURLToPath(new URL('./sqlite-race-worker.ts', import.meta.url));

/**
 * Forks one OS process per job, waits until every one has opened its store and reported ready,
 * releases them all at once, and collects their reports. Any racer that fails or exits without a
 * report rejects the race.
 */
export async function raceProcesses(jobs: readonly RaceJob[]): Promise<RaceReport[]> {
  return raceWorkers<RaceJob, RaceReport>(WORKER, jobs);
}

/**
 * {@link raceProcesses} with another worker module: `worker` gets its job as JSON in argv[2], sends
 * `'ready'` once its store is open, waits for `'go'`, and answers one report (or `{ error }`).
 */
export async function raceWorkers<Job, Report>(worker: string, jobs: readonly Job[]): Promise<Report[]> {
  const compiled = await compiledEntry(worker);
  const children = jobs.map((job) => fork(compiled, [JSON.stringify(job)], { execArgv: [], stdio: 'inherit' }));
  const ready = children.map(
    (child) =>
      new Promise<void>((resolve, reject) => {
        child.once('message', (message) => (message === 'ready' ? resolve() : reject(new Error(`racer said ${JSON.stringify(message)}`))));
        child.once('exit', (code) => reject(new Error(`racer exited with ${code} before it was ready`)));
      }),
  );
  const reports = children.map(
    (child) =>
      new Promise<Report>((resolve, reject) => {
        child.on('message', (message) => {
          if (message === 'ready') return;
          const report = message as Report & { error?: string };
          if (report.error !== undefined) reject(new Error(`racer failed: ${report.error}`));
          else resolve(report);
        });
        child.once('exit', (code) => reject(new Error(`racer exited with ${code} without a report`)));
      }),
  );
  // Marked handled here: when a racer fails before the barrier, the ready wait reports it.
  for (const report of reports) report.catch(() => undefined);
  try {
    await Promise.all(ready);
    for (const child of children) child.send('go');
    return await Promise.all(reports);
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
  }
}

/** Deals `runs` round-robin to `processes` racers, so each racer's share interleaves with the others'. */
export function deal(runs: readonly string[], processes: number): string[][] {
  const shares: string[][] = Array.from({ length: processes }, () => []);
  runs.forEach((run, index) => shares[index % processes]?.push(run));
  return shares;
}
