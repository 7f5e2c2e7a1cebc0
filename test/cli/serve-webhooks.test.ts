import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { resolveServeConfig } from '../../src/cli/serve/serve-config.js';
import { startServer } from '../../src/cli/serve/start-server.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { createWebhooks } from '../../src/plane/webhooks.js';
import { openStore } from '../../src/store/open-store.js';
import { startReceiver } from '../plane/webhook-fixtures.js';
import { temporaryDirectory } from './cli-helpers.js';

// `serve` runs a webhook dispatcher (docs/guides/webhooks.md) unless --webhook-poll-ms is 0.

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function haltAfterAnEndpoint(): Promise<{ storeUrl: string; received: () => number; halt: () => Promise<void> }> {
  const dir = temporaryDirectory();
  cleanups.push(() => dir.remove());
  const storeUrl = `sqlite:${join(dir.path, 'q.db')}`;
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  const store = await openStore(storeUrl);
  cleanups.push(() => store.close());
  const plane = createPlane({ store });
  await plane.setQuota('acme', { maxConcurrentRuns: 10 }, { by: { actor: 'ops', basis: 'asserted' }, newTenant: true });
  await createWebhooks({ store }).add({ tenant: 'acme', url: receiver.url });
  return {
    storeUrl,
    received: () => receiver.received.length,
    halt: async () => {
      await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'drill', by: { actor: 'ops', basis: 'asserted' }, newTenant: true });
    },
  };
}

const within = async (ms: number, done: () => boolean): Promise<boolean> => {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return done();
};

describe('serve --webhook-poll-ms', () => {
  it('defaults to 250 ms; the flag or QUOTAPLANE_WEBHOOK_POLL_MS sets it, 0 for none', () => {
    expect(resolveServeConfig({}, {}).webhookPollMs).toBe(250);
    expect(resolveServeConfig({}, { QUOTAPLANE_WEBHOOK_POLL_MS: '0' }).webhookPollMs).toBe(0);
  });

  it('H6 a running server delivers an event written through another connection to its store within a second', async () => {
    const setup = await haltAfterAnEndpoint();
    const server = await startServer({ storeUrl: setup.storeUrl, host: '127.0.0.1', port: 0, sweepIntervalMs: 0, logLevel: 'silent' });
    cleanups.push(() => server.close());
    await setup.halt();
    expect(await within(1000, () => setup.received() === 1)).toBe(true);
  });

  it('0 runs no dispatcher', async () => {
    const setup = await haltAfterAnEndpoint();
    const server = await startServer({ storeUrl: setup.storeUrl, host: '127.0.0.1', port: 0, sweepIntervalMs: 0, webhookPollMs: 0, logLevel: 'silent' });
    cleanups.push(() => server.close());
    await setup.halt();
    expect(await within(700, () => setup.received() > 0)).toBe(false);
  });
});
