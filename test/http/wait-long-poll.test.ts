import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { createClient } from '../../src/client/create-client.js';
import { CLIENT_MAX_WAIT_MS } from '../../src/client/index.js';
import { MAX_HTTP_WAIT_MS } from '../../src/http/routes/runs.js';
import { bearer, serviceFixture, T0, type ServiceFixture } from './http-fixtures.js';
import { until } from '../until.js';

// Over HTTP: `POST /v1/runs` with `wait` is a long poll.

let fixture: ServiceFixture | null = null;
afterEach(async () => {
  await fixture?.close();
  fixture = null;
});

async function listening(): Promise<{ f: ServiceFixture; url: string }> {
  const f = await serviceFixture();
  fixture = f;
  await f.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = f.app.server.address() as AddressInfo;
  await f.plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
  return { f, url: `http://127.0.0.1:${port}` };
}

async function queueDepth(f: ServiceFixture): Promise<number> {
  return (await f.store.tenant('acme').waitQueue({ atMs: f.clock.nowMs() })).depth;
}

describe('waiting admissions over HTTP', () => {
  it('W30: a long-polled admission is granted when another client settles', async () => {
    const { f, url } = await listening();
    const holder = createClient({ url, key: f.key.runAcme.secret });
    const waiter = createClient({ url, key: f.key.runAcme.secret });
    expect((await holder.admit({ tenant: 'acme', run: 'run-1' })).ok).toBe(true);
    const waiting = waiter.admit({ tenant: 'acme', run: 'run-2', waitMs: 10_000 });
    await until(async () => (await queueDepth(f)) === 1, 'the queue holds 1 waiter', { withinMs: 4_000 });
    // While it waits, every other decision of the tenant answers at once.
    const refused = await holder.admit({ tenant: 'acme', run: 'run-3' });
    expect(refused.ok ? 'ok' : refused.refusal.code).toBe('TooManyRuns');
    await holder.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
    const granted = await waiting;
    expect(granted).toMatchObject({ ok: true, run: 'run-2', epoch: 1 });
    expect(await f.store.tenant('acme').runningRuns(10)).toEqual(['run-2']);
    const usage = await holder.usage({ tenant: 'acme' });
    expect(usage.queue).toEqual({ depth: 0, oldestWaitMs: null });
  });

  it('W31: a client that disconnects while waiting leaves nothing behind', async () => {
    const { f, url } = await listening();
    const holder = createClient({ url, key: f.key.runAcme.secret });
    expect((await holder.admit({ tenant: 'acme', run: 'run-1' })).ok).toBe(true);
    const gone = new AbortController();
    const waiting = createClient({ url, key: f.key.runAcme.secret }).admit({ tenant: 'acme', run: 'run-2', waitMs: 10_000, signal: gone.signal });
    await until(async () => (await queueDepth(f)) === 1, 'the queue holds 1 waiter', { withinMs: 4_000 });
    const usage = await holder.usage({ tenant: 'acme' });
    expect(usage.queue).toEqual({ depth: 1, oldestWaitMs: 0 });
    const metrics = await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) });
    expect(metrics.body).toContain('quotaplane_tenant_waiting_admissions{tenant="acme"} 1');
    expect(metrics.body).toContain('quotaplane_tenant_oldest_wait_seconds{tenant="acme"} 0');
    gone.abort();
    await expect(waiting).rejects.toThrow();
    await until(async () => (await queueDepth(f)) === 0, 'the queue holds 0 waiters', { withinMs: 4_000 });
    expect(await f.store.tenant('acme').waitQueue({ atMs: f.clock.nowMs() })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
    await holder.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
    expect(await f.store.tenant('acme').runningRuns(10)).toEqual([]);
    expect(await f.store.tenant('acme').getRun('run-2')).toBeNull();
  });

  it('W32: a wait beyond the bound is refused naming the field, and a timed-out wait answers 429 with its place', async () => {
    const { f, url } = await listening();
    const response = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { ...bearer(f.key.runAcme), 'content-type': 'application/json' },
      body: JSON.stringify({ run: 'run-9', wait: 60_001 }),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('wait');
    await createClient({ url, key: f.key.runAcme.secret }).admit({ tenant: 'acme', run: 'run-1' });
    const timedOut = await fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { ...bearer(f.key.runAcme), 'content-type': 'application/json' },
      body: JSON.stringify({ run: 'run-2', wait: 150 }),
    });
    expect(timedOut.status).toBe(429);
    const problem = (await timedOut.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ code: 'TooManyRuns', running: 1, limit: 1, queuePosition: 1 });
    expect(problem.waitedMs).toBe(f.clock.nowMs() + 150 - T0);
    expect(await queueDepth(f)).toBe(0);
  });

  it("an admission may name its wait waitMs, as the library does; the two names with different values are a 400 naming waitMs", async () => {
    const { f, url } = await listening();
    await createClient({ url, key: f.key.runAcme.secret }).admit({ tenant: 'acme', run: 'run-1' });
    const post = (body: Record<string, unknown>) =>
      fetch(`${url}/v1/runs`, { method: 'POST', headers: { ...bearer(f.key.runAcme), 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const waited = await post({ run: 'run-2', waitMs: 150 });
    expect(waited.status).toBe(429);
    expect(await waited.json()).toMatchObject({ code: 'TooManyRuns', queuePosition: 1 });
    const both = await post({ run: 'run-3', wait: 100, waitMs: 200 });
    expect(both.status).toBe(400);
    expect(await both.json()).toMatchObject({ field: 'waitMs' });
    expect(await queueDepth(f)).toBe(0);
  });

  it('W33: atMs with wait is a 400 naming wait, in the past and in the future, and nothing waits', async () => {
    const { f, url } = await listening();
    await createClient({ url, key: f.key.runAcme.secret }).admit({ tenant: 'acme', run: 'run-1' });
    for (const atMs of [f.clock.nowMs() - 60_000, f.clock.nowMs() + 60_000]) {
      const response = await fetch(`${url}/v1/runs`, {
        method: 'POST',
        headers: { ...bearer(f.key.opAll), 'content-type': 'application/json' },
        body: JSON.stringify({ tenant: 'acme', run: 'run-2', atMs, wait: 1_000 }),
      });
      expect(response.status).toBe(400);
      const problem = (await response.json()) as Record<string, unknown>;
      expect(problem).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'wait' });
      expect(problem.detail).toContain('atMs');
    }
    expect(await queueDepth(f)).toBe(0);
    expect(await f.store.tenant('acme').runningRuns(10)).toEqual(['run-1']);
  });

  it('W35: the client refuses a waitMs above the HTTP bound naming waitMs, before sending anything', async () => {
    const { f, url } = await listening();
    expect(CLIENT_MAX_WAIT_MS).toBe(MAX_HTTP_WAIT_MS);
    const client = createClient({ url, key: f.key.runAcme.secret });
    await expect(client.admit({ tenant: 'acme', run: 'run-1', waitMs: MAX_HTTP_WAIT_MS + 1 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'waitMs' },
      message: expect.stringContaining(String(MAX_HTTP_WAIT_MS)),
    });
    expect(await f.store.tenant('acme').getRun('run-1')).toBeNull();
    // The bound itself is sent and, with a free slot, admitted at once.
    expect(await client.admit({ tenant: 'acme', run: 'run-1', waitMs: MAX_HTTP_WAIT_MS })).toMatchObject({ ok: true, run: 'run-1' });
  });
});
