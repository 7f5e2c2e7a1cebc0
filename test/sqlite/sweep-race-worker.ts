// A racer for sweep-race.test.ts: forked as its own OS process, it opens the shared SQLite file,
// announces itself, waits for the parent's "go", then either sweeps every tenant or heartbeats
// each of its runs, all at one instant, and reports what happened.
import { isQuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';

/** What the parent asks one racer to do. */
export interface SweepRaceJob {
  readonly role: 'sweep' | 'heartbeat';
  readonly url: string;
  readonly tenant: string;
  readonly runs: readonly string[];
  readonly atMs: number;
}

/** What a racer reports: the runs it swept (slot released), or each heartbeat's answer. */
export interface SweepRaceReport {
  readonly swept: readonly string[];
  readonly beats: readonly { run: string; answer: 'renewed' | 'CONFLICT' }[];
}

const job = JSON.parse(process.argv[2] ?? '{}') as SweepRaceJob;
const send = (message: unknown) => new Promise<void>((resolve) => process.send?.(message, () => resolve()));
const store = await openStore(job.url);
const plane = createPlane({ store });

process.on('message', (message) => {
  if (message !== 'go') return;
  void (async () => {
    try {
      const report: SweepRaceReport = { swept: [], beats: [] };
      if (job.role === 'sweep') {
        const result = await plane.sweep({ tenant: job.tenant, atMs: job.atMs });
        (report.swept as string[]).push(...result.swept.filter((run) => run.releasedSlot).map((run) => run.run));
      } else {
        for (const run of job.runs) {
          try {
            await plane.heartbeat({ tenant: job.tenant, run, epoch: 1, atMs: job.atMs, leaseMs: 60_000 });
            (report.beats as SweepRaceReport['beats'][number][]).push({ run, answer: 'renewed' });
          } catch (error) {
            if (!isQuotaError(error, 'CONFLICT')) throw error;
            (report.beats as SweepRaceReport['beats'][number][]).push({ run, answer: 'CONFLICT' });
          }
        }
      }
      await send(report);
      await store.close();
      process.exit(0);
    } catch (error) {
      await send({ error: error instanceof Error ? error.message : String(error) });
      process.exit(1);
    }
  })();
});

await send('ready');
