// Measures webhook delivery latency (docs/design/rules.md#h6): from a halt's commit (the plane's
// answer) to its delivery reaching a local HTTP endpoint, with a dispatcher polling every 250 ms.
//
//   npx tsx scripts/webhook-latency.ts [sqlite|postgres|postgres-url] [events] [poll|nudge]
//
// poll (default): the dispatcher finds each event at its next poll; nudge: the plane nudges it
// after each verb that may write an event, as `quotaplane serve` does.
//
// sqlite (default) uses a temporary file; postgres an embedded server started for the purpose; a
// postgres:// URL a fresh schema there.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { createPlane } from '../src/plane/create-plane.js';
import { createDispatcher } from '../src/plane/webhook-dispatcher.js';
import { nudgingPlane } from '../src/plane/webhook-nudge.js';
import { createWebhooks } from '../src/plane/webhooks.js';
import { openStore } from '../src/store/open-store.js';
import { startEmbeddedServer } from '../test/postgres/embedded-server.js';

const given = process.argv[2] ?? 'sqlite';
const embedded = given === 'postgres' ? await startEmbeddedServer('latency') : null;
const target = embedded?.url ?? given;
const count = Number(process.argv[3] ?? 200);
const nudged = process.argv[4] === 'nudge';
const dir = mkdtempSync(join(tmpdir(), 'qp-webhook-latency-'));
const schema = `qp_latency_${process.pid}`;
const store = target === 'sqlite' ? await openStore(`sqlite:${join(dir, 'quota.db')}`) : await openStore(target, { schema });

const arrived = new Map<string, number>();
const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    arrived.set(String(request.headers['webhook-id']), performance.now());
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

await createWebhooks({ store }).add({ tenant: null, url });
const dispatcher = createDispatcher({ store });
const plane = nudged ? nudgingPlane(createPlane({ store }), () => dispatcher.nudge()) : createPlane({ store });
dispatcher.start();

const by = { actor: 'latency', basis: 'asserted' } as const;
const committed = new Map<string, number>();
for (let n = 0; n < count; n += 1) {
  const tenant = `t${n}`;
  await plane.halt({ tenant, scope: 'tenant', reason: 'latency', by, newTenant: true });
  const doneAt = performance.now();
  const [event] = (await store.eventsAfter!(0, 100_000, tenant)).slice(-1);
  committed.set(event!.id, doneAt);
  // Spread the events over the poll interval, as events arrive in life.
  await new Promise((resolve) => setTimeout(resolve, 37));
}
const deadline = performance.now() + 10_000;
while (arrived.size < count && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));

const latencies = [...committed].map(([id, at]) => (arrived.get(id) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => a - b);
const pick = (q: number): string => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)]!.toFixed(1);
console.log(`${target === 'sqlite' ? 'sqlite' : 'postgres'} (${nudged ? 'nudge + poll' : 'poll only'}): ${count} events, delivered ${arrived.size}; latency ms p50 ${pick(0.5)} p90 ${pick(0.9)} p99 ${pick(0.99)} max ${pick(1)}`);

await dispatcher.stop();
server.close();
if (target !== 'sqlite') {
  const pg = await import('pg');
  const client = new pg.default.Client({ connectionString: target });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
}
await store.close();
rmSync(dir, { recursive: true, force: true });
await embedded?.dispose();
