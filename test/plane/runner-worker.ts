// A runner process for crash-recovery-kill.test.ts: forked as its own OS process, it opens the
// shared store (a SQLite file or a PostgreSQL schema), admits its runs through a plane with the lease and instant the parent
// gives, reports the grants, and then waits as a live runner would, until the parent kills it.
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore, type OpenStoreOptions } from '../../src/store/open-store.js';

/** What the parent asks the runner to admit. */
export interface RunnerJob {
  readonly url: string;
  readonly options?: OpenStoreOptions;
  readonly tenant: string;
  readonly runs: readonly string[];
  readonly atMs: number;
  readonly leaseMs: number;
  readonly budget: { readonly maxTokens: number; readonly maxCallTokens: number };
}

/** What the runner reports once every run is admitted: the grants (or refusal messages), and its pid. */
export interface RunnerReport {
  readonly pid: number;
  readonly grants: readonly { run: string; ok: boolean; epoch?: number; leaseExpiresAtMs?: number; message?: string }[];
}

const job = JSON.parse(process.argv[2] ?? '{}') as RunnerJob;
const store = await openStore(job.url, job.options ?? {});
const plane = createPlane({ store });
const grants: RunnerReport['grants'][number][] = [];
for (const run of job.runs) {
  const answer = await plane.admit({ tenant: job.tenant, run, budget: job.budget, atMs: job.atMs, leaseMs: job.leaseMs });
  grants.push(answer.ok ? { run, ok: true, epoch: answer.epoch, leaseExpiresAtMs: answer.leaseExpiresAtMs } : { run, ok: false, message: answer.message });
}
process.send?.({ pid: process.pid, grants } satisfies RunnerReport);
// Keep running, as a runner in the middle of its work does, until the parent kills the process.
setInterval(() => undefined, 60_000);
