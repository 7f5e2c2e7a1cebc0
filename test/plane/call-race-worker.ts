// A caller process for call-processes.test.ts: forked as its own OS process with its own store (its
// own SQLite connection, or its own PostgreSQL pool) on the shared store. It makes model calls until
// `admitted` of them were admitted: each reserves its worst case, holds it a few milliseconds, then
// books exactly that worst case (or, now and then, releases it); a refused call waits until the
// refusal's retryAtMs and tries again. It reports how many were admitted and refused.
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore, type OpenStoreOptions } from '../../src/store/open-store.js';

/** What the parent asks one caller process to do. */
export interface CallRaceJob {
  readonly url: string;
  readonly options: OpenStoreOptions;
  readonly tenant: string;
  readonly process: number;
  readonly admitted: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as CallRaceJob;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const store = await openStore(job.url, job.options);
  const plane = createPlane({ store });
  let admitted = 0;
  let refused = 0;
  let released = 0;
  for (let i = 0; admitted < job.admitted; i += 1) {
    const outcome = await plane.reserveCall({ tenant: job.tenant, model: 'm', callId: `p${job.process}-c${i}`, inputTokens: 100, maxOutputTokens: 100 });
    if (!outcome.ok) {
      refused += 1;
      if (outcome.refusal.code !== 'CallLimited') throw new Error(`unexpected refusal ${outcome.refusal.code}`);
      await sleep(Math.max(0, outcome.refusal.retryAtMs - Date.now()));
      continue;
    }
    admitted += 1;
    await sleep(Math.floor(Math.random() * 15));
    if (i % 7 === 3) {
      await plane.releaseCall({ tenant: job.tenant, callId: outcome.call.callId });
      released += 1;
    } else {
      await plane.adjustCall({ tenant: job.tenant, callId: outcome.call.callId, usage: { inputTokens: 100, outputTokens: 100 } });
    }
  }
  await store.close();
  process.send?.({ admitted, refused, released });
}

main().catch((error: unknown) => {
  process.send?.({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
});
