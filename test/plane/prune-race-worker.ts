// A racer for prune-race.test.ts: forked as its own OS process, it opens the shared store,
// announces itself, waits for the parent's "go", then plays one role against the same tenant
// while the others play theirs, and reports what every call answered.
import { isQuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore, type OpenStoreOptions } from '../../src/store/open-store.js';

/** What the parent asks one racer to do. */
export interface PruneRaceJob {
  /** `prune` prunes; `retry` resends each old run's concluding settle; `admit` admits and settles new runs. */
  readonly role: 'prune' | 'retry' | 'admit';
  readonly url: string;
  readonly options: OpenStoreOptions;
  readonly tenant: string;
  readonly runs: readonly string[];
  readonly atMs: number;
  readonly olderThanMs: number;
  readonly spendTokens: number;
}

/** What a racer reports. */
export interface PruneRaceReport {
  readonly pruned: number;
  /** Per retried settle: `already-settled` (before its run was pruned) or `pruned` (after). */
  readonly retries: readonly { run: string; answer: string }[];
  /** Per new run: its admission's answer (`ok` or the refusal code) and whether it settled. */
  readonly admitted: readonly { run: string; answer: string; settled: boolean }[];
}

const job = JSON.parse(process.argv[2] ?? '{}') as PruneRaceJob;
const send = (message: unknown) => new Promise<void>((resolve) => process.send?.(message, () => resolve()));
const store = await openStore(job.url, job.options);
const plane = createPlane({ store });
const spend = { tokens: job.spendTokens, minorUnits: 0 };

async function play(): Promise<PruneRaceReport> {
  const report = { pruned: 0, retries: [] as { run: string; answer: string }[], admitted: [] as { run: string; answer: string; settled: boolean }[] };
  if (job.role === 'prune') {
    const result = await plane.prune({ tenant: job.tenant, olderThanMs: job.olderThanMs, atMs: job.atMs, batchSize: 5, by: { actor: 'racer', basis: 'asserted' } });
    report.pruned = result.total.runs;
  } else if (job.role === 'retry') {
    for (const run of job.runs) {
      try {
        const answer = await plane.settle({ tenant: job.tenant, run, epoch: 1, spend, concludes: true, atMs: job.atMs });
        report.retries.push({ run, answer: answer.outcome });
      } catch (error) {
        if (!isQuotaError(error, 'CONFLICT') || error.details.pruned !== true) throw error;
        report.retries.push({ run, answer: 'pruned' });
      }
    }
  } else {
    for (const run of job.runs) {
      const grant = await plane.admit({ tenant: job.tenant, run, budget: { maxTokens: job.spendTokens, maxCallTokens: 0 }, atMs: job.atMs });
      if (!grant.ok) {
        report.admitted.push({ run, answer: grant.refusal.code, settled: false });
        continue;
      }
      const settled = await plane.settle({ tenant: job.tenant, run, epoch: 1, spend, concludes: true, atMs: job.atMs });
      report.admitted.push({ run, answer: 'ok', settled: settled.outcome === 'settled' });
    }
  }
  return report;
}

process.on('message', (message) => {
  if (message !== 'go') return;
  void (async () => {
    try {
      const report = await play();
      await send(report);
      await store.close();
      process.exit(0);
    } catch (error) {
      await send({ error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) });
      process.exit(1);
    }
  })();
});
await send('ready');
