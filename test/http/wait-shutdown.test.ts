import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { startServer } from '../../src/cli/serve/start-server.js';
import { openStore } from '../../src/store/open-store.js';

// A long poll open when the server shuts down (serve's SIGTERM calls close()).

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('waiting admissions when the server shuts down', () => {
  it('W34: an open long poll is answered 503 with Retry-After, its waiter cancelled, and close does not wait out the shutdown timeout', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'qp-wait-shutdown-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const storeUrl = `sqlite:${join(dir, 'served.db')}`;
    // A shutdown limit far beyond the test's own timeout: a close that waited for the poll to end
    // by itself (or cut it at the limit) would fail this test, not pass it slowly.
    const server = await startServer({ storeUrl, host: '127.0.0.1', port: 0, sweepIntervalMs: 0, shutdownTimeoutMs: 300_000, logLevel: 'silent' });
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await server.close();
    });
    const key = server.firstKey?.secret;
    if (key === undefined) throw new Error('a new store should get a first key');
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const put = await fetch(`${server.url}/v1/tenants/acme/quota?newTenant=true`, { method: 'PUT', headers, body: JSON.stringify({ maxConcurrentRuns: 1 }) });
    expect(put.status).toBe(200);
    const holder = await fetch(`${server.url}/v1/runs`, { method: 'POST', headers, body: JSON.stringify({ tenant: 'acme', run: 'holder' }) });
    expect(holder.status).toBe(200);

    const poll = fetch(`${server.url}/v1/runs`, { method: 'POST', headers, body: JSON.stringify({ tenant: 'acme', run: 'waiter', wait: 60_000 }) });
    let depth = 0;
    for (let attempt = 0; attempt < 400 && depth === 0; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      const usage = await fetch(`${server.url}/v1/usage?tenant=acme`, { headers });
      depth = ((await usage.json()) as { queue: { depth: number } }).queue.depth;
    }
    expect(depth).toBe(1);

    await server.close();
    closed = true;
    const answer = await poll;
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toMatch(/^\d+$/);
    const problem = (await answer.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(problem.detail).toContain('shutting down');

    const store = await openStore(storeUrl);
    cleanups.push(() => store.close());
    const acme = store.tenant('acme');
    expect(await acme.waitQueue({ atMs: Date.now() })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
    expect(await acme.runningRuns(10)).toEqual(['holder']);
    expect(await acme.getRun('waiter')).toBeNull();
  });
});
