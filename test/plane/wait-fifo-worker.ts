// A waiter process for wait-fifo-processes.test.ts: forked as its own OS process with
// its own store (its own SQLite connection, or its own PostgreSQL pool and LISTEN connection) on
// the shared store. It joins the tenant's queue with each of its runs at once (racing the other
// processes), reports the places it got, then on "go" waits for each grant through the plane;
// holding a granted slot it checks the ceiling, appends the run to the shared log, and concludes.
import { appendFileSync } from 'node:fs';

import { createPlane } from '../../src/plane/create-plane.js';
import { WAITER_LEASE_MS } from '../../src/plane/wait-admission.js';
import { openStore, type OpenStoreOptions } from '../../src/store/open-store.js';

/** What the parent asks one waiter process to do. */
export interface FifoJob {
  readonly url: string;
  readonly options: OpenStoreOptions;
  readonly tenant: string;
  readonly runs: readonly string[];
  readonly log: string;
  readonly holdMs: number;
}

/** What a waiter process reports: its place per run on joining, and the most slots it ever saw held. */
export interface FifoReport {
  readonly places: readonly { run: string; position: number }[];
  readonly mostRunning: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as FifoJob;
const send = (message: unknown) => new Promise<void>((resolve) => process.send?.(message, () => resolve()));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const store = await openStore(job.url, job.options);
  const plane = createPlane({ store });
  const handle = store.tenant(job.tenant);
  const joined = await Promise.all(
    job.runs.map((run) =>
      handle.admitOrWait(
        { run, budget: {}, width: 1, atMs: Date.now(), leaseMs: 60_000 },
        { untilMs: Date.now() + 60_000, leaseMs: WAITER_LEASE_MS },
      ),
    ),
  );
  const places = joined.map((outcome, index) => {
    if (outcome.ok || !('waiting' in outcome)) throw new Error(`run ${job.runs[index]} did not wait: ${JSON.stringify(outcome)}`);
    return { run: outcome.run, position: outcome.position };
  });
  await send({ places });
  await new Promise<void>((resolve) => process.once('message', () => resolve()));
  let mostRunning = 0;
  await Promise.all(
    job.runs.map(async (run) => {
      const pass = await plane.admit({ tenant: job.tenant, run, waitMs: 60_000 });
      if (!pass.ok) throw new Error(`run ${run} was refused: ${pass.message}`);
      mostRunning = Math.max(mostRunning, await handle.running());
      appendFileSync(job.log, `${run}\n`);
      await sleep(job.holdMs);
      mostRunning = Math.max(mostRunning, await handle.running());
      await plane.settle({ tenant: job.tenant, run, epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
    }),
  );
  await send({ done: { places, mostRunning } satisfies FifoReport });
  await store.close();
}

main().catch(async (error: unknown) => {
  await send({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});
