import { mkdtemp, rm } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createClient, type PlaneVerbs } from '../src/client/create-client.js';
import { mintApiKey } from '../src/http/api-key-secret.js';
import { buildApp } from '../src/http/build-app.js';
import { createPlane } from '../src/plane/create-plane.js';
import type { Plane } from '../src/plane/plane.js';
import type { ApiKeyStore } from '../src/store/api-keys.js';
import { createMemoryApiKeyStore } from '../src/store/memory-api-keys.js';
import { openStore } from '../src/store/open-store.js';
import type { QuotaStore } from '../src/store/store.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { interleavedLoops, type LoopResult, type Operation, perSecond } from './timed-loop.js';

/**
 * The HTTP section (docs/benchmarks.md#the-sections): admission cycles per second through the
 * service, a client on a real port on 127.0.0.1 talking to `buildApp`, next to the same cycle on
 * the plane in process, interleaved, so the difference is what HTTP, authentication, validation and
 * serialisation cost. On SQLite (a durable file, as `serve` opens it) and on PostgreSQL (an
 * embedded server with its durable defaults). On both the runner key is in the store, so each
 * request's key check is a database read, as under `serve`. The client is `createClient` with its
 * default transport (undici's `request`), in this same process: its CPU counts against the cycle,
 * as a caller's does.
 */
export const httpSection: BenchSection = {
  name: 'http',
  async run(context: BenchContext): Promise<BenchRow[]> {
    const rows: BenchRow[] = [];
    const directory = await mkdtemp(join(tmpdir(), 'quotaplane-bench-http-'));
    try {
      const sqlite = await openStore(`sqlite:${join(directory, 'quotaplane.db')}`);
      rows.push(...(await measure(context, 'sqlite', sqlite, 'SQLite file as serve opens it (WAL, synchronous=FULL); keys in the store')));
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
    context.log('http: starting an embedded PostgreSQL server (durable defaults)');
    const server = await startEmbeddedServer('bench-http', { durable: true });
    try {
      const postgres = await openStore(server.url);
      rows.push(...(await measure(context, 'postgres', postgres, 'embedded PostgreSQL, durable defaults; keys in the store')));
    } finally {
      await server.dispose();
    }
    return rows;
  },
};

async function measure(context: BenchContext, backend: string, store: QuotaStore, note: string): Promise<BenchRow[]> {
  try {
    // Both adapters keep API keys; the fallback only serves a store that keeps none.
    const keys: ApiKeyStore = store.apiKeys?.() ?? createMemoryApiKeyStore();
    const runner = mintApiKey({ role: 'runner', tenant: 'bench-http', name: 'bench-runner', atMs: Date.now() });
    await keys.create(runner.key);
    const plane = createPlane({ store });
    const app = await buildApp({ plane, store, keys });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      const client = createClient({ url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, key: runner.secret });
      context.log(`http: ${backend}: admit + settle through a client on 127.0.0.1, and on the plane in process, interleaved`);
      const [overHttp, inProcess] = await interleavedLoops(
        [await admissionCycle(client, plane, 'bench-http'), await admissionCycle(plane, plane, 'bench-plane')],
        context.loopMs,
      );
      return [
        {
          section: 'http',
          name: `HTTP admit + settle (cycle), ${backend}`,
          ...figures(overHttp as LoopResult),
          commitsPerOperation: 2,
          note: `${note}; one client, keep-alive, sequential; a runner key checked per request`,
        },
        {
          section: 'http',
          name: `plane admit + settle (cycle), ${backend}, in process`,
          ...figures(inProcess as LoopResult),
          commitsPerOperation: 2,
          note: 'the same cycle on the same store without HTTP, for the difference',
        },
      ];
    } finally {
      await app.close();
    }
  } finally {
    await store.close();
  }
}

function figures(result: LoopResult): Pick<BenchRow, 'operations' | 'seconds' | 'perSecond'> {
  return { operations: result.operations, seconds: result.seconds, perSecond: perSecond(result) };
}

/** One cycle: admit (slot + hold) then settle with `concludes`, as a runner of `tenant` does it. */
async function admissionCycle(verbs: PlaneVerbs, setup: Plane, tenant: string): Promise<Operation> {
  await setup.setQuota(tenant, { period: 'daily', maxConcurrentRuns: 4, maxTokensPerPeriod: 1_000_000_000_000 }, { newTenant: true });
  const budget = { maxTokens: 2_000, maxCallTokens: 1_000 };
  return async () => {
    const pass = await verbs.admit({ tenant, budget, width: 1 });
    if (!pass.ok) throw new Error(`the bench admission was refused: ${pass.message}`);
    await verbs.settle({ tenant, run: pass.run, epoch: pass.epoch, spend: { tokens: 700, minorUnits: 0 }, concludes: true });
  };
}
