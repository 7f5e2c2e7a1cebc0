// A `serve`-like process for the service section (docs/benchmarks.md#the-sections), forked so that
// the clients' work does not run on the server's event loop: quotaplane's app on a durable SQLite
// file (keys in the store, as `serve` keeps them), a trivial Fastify route, and a Fastify route
// around rate-limiter-flexible's `consume()` on a file with the same settings. It prints their
// ports and a runner key as one JSON line, then serves until killed.
import { join } from 'node:path';

import Fastify from 'fastify';

import { mintApiKey } from '../src/http/api-key-secret.js';
import { buildApp } from '../src/http/build-app.js';
import { createPlane } from '../src/plane/create-plane.js';
import { openStore } from '../src/store/open-store.js';
import { openRateLimiterPeer } from './sqlite-peer.js';

/** The tenant every bench client acts for. */
export const SERVE_TENANT = 'bench-serve';

const directory = process.argv[2] as string;
const store = await openStore(`sqlite:${join(directory, 'quotaplane.db')}`);
const plane = createPlane({ store });
await plane.setQuota(SERVE_TENANT, { period: 'daily', maxConcurrentRuns: 100_000, maxTokensPerPeriod: 1_000_000_000_000 }, { by: { actor: 'bench', basis: 'asserted' }, newTenant: true });
const keys = store.apiKeys?.();
if (keys === undefined) throw new Error('the SQLite store keeps API keys');
const runner = mintApiKey({ role: 'runner', tenant: SERVE_TENANT, name: 'bench-runner', atMs: Date.now() });
await keys.create(runner.key);
const app = await buildApp({ plane, store, keys });
await app.listen({ host: '127.0.0.1', port: 0 });

const trivial = Fastify();
trivial.get('/ping', async () => ({ ok: true }));
await trivial.listen({ host: '127.0.0.1', port: 0 });

const peer = await openRateLimiterPeer(join(directory, 'rate-limiter-flexible.db'));
const peerApp = Fastify();
peerApp.get('/healthz', async () => ({ status: 'ok' }));
peerApp.post<{ Params: { key: string } }>('/consume/:key', async (request) => {
  await peer.limiter.consume(request.params.key, 1);
  return { ok: true };
});
await peerApp.listen({ host: '127.0.0.1', port: 0 });

const portOf = (server: { server: { address(): unknown } }) => (server.server.address() as { port: number }).port;
process.stdout.write(`${JSON.stringify({ quotaplane: portOf(app), trivial: portOf(trivial), peer: portOf(peerApp), secret: runner.secret })}\n`);
