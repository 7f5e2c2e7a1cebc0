// A loaded runner for crash-recovery-kill.test.ts: forked as its own OS process, it opens the
// shared store and keeps `lanes` decisions in flight at once on the wall clock (admit, heartbeat,
// settle, over and over), so they travel together in group-commit batches. Every answer is sent to
// the parent with the instant it arrived (and each decision, `{ asked: run, verb }`, as it is asked), until
// the parent kills the process with SIGKILL.
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore, type OpenStoreOptions } from '../../src/store/open-store.js';

/** What the parent asks the loaded runner to do. */
export interface LoadJob {
  readonly url: string;
  readonly options?: OpenStoreOptions;
  readonly tenant: string;
  readonly lanes: number;
  readonly leaseMs: number;
  /** The plane's bound on a decision's wait, ms (`PlaneOptions.maxDecisionWaitMs`). */
  readonly maxDecisionWaitMs: number;
}

/**
 * One answer: which decision, whether it was ok, the lease it answered (admit, heartbeat), the
 * wall-clock instant it arrived (`answeredAtMs`), and how many decisions were in flight then.
 * A fault carries its code instead.
 */
export interface LoadAnswer {
  readonly verb: 'admit' | 'heartbeat' | 'settle';
  readonly run: string;
  readonly ok: boolean;
  readonly leaseExpiresAtMs?: number;
  readonly askedAtMs: number;
  readonly answeredAtMs: number;
  readonly inFlight: number;
  readonly fault?: string;
}

const job = JSON.parse(process.argv[2] ?? '{}') as LoadJob;
const store = await openStore(job.url, job.options ?? {});
const plane = createPlane({ store, maxDecisionWaitMs: job.maxDecisionWaitMs });
let inFlight = 0;
let next = 0;

async function ask<T extends { ok: boolean }>(verb: LoadAnswer['verb'], run: string, call: () => Promise<T>): Promise<T | null> {
  inFlight += 1;
  const askedAtMs = Date.now();
  process.send?.({ asked: run, verb });
  try {
    const answer = await call();
    inFlight -= 1;
    const lease = (answer as { leaseExpiresAtMs?: number }).leaseExpiresAtMs;
    const report: LoadAnswer = { verb, run, ok: answer.ok, askedAtMs, answeredAtMs: Date.now(), inFlight, ...(lease === undefined ? {} : { leaseExpiresAtMs: lease }) };
    process.send?.(report);
    return answer;
  } catch (error) {
    inFlight -= 1;
    const fault = (error as { code?: string }).code ?? String(error);
    process.send?.({ verb, run, ok: false, askedAtMs, answeredAtMs: Date.now(), inFlight, fault } satisfies LoadAnswer);
    return null;
  }
}

async function lane(): Promise<void> {
  for (;;) {
    const run = `load-${process.pid}-${next++}`;
    const admitted = await ask('admit', run, () => plane.admit({ tenant: job.tenant, run, leaseMs: job.leaseMs }));
    if (admitted === null || !admitted.ok) continue;
    const renewed = await ask('heartbeat', run, () => plane.heartbeat({ tenant: job.tenant, run, epoch: 1, leaseMs: job.leaseMs }));
    if (renewed === null) continue;
    await ask('settle', run, () => plane.settle({ tenant: job.tenant, run, epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true }));
  }
}

for (let index = 0; index < job.lanes; index += 1) void lane();
