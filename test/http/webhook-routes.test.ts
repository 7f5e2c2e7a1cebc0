import { afterEach, describe, expect, it } from 'vitest';

import { createDispatcher } from '../../src/plane/webhook-dispatcher.js';
import { startReceiver, type Receiver } from '../plane/webhook-fixtures.js';
import { createClient } from '../../src/client/create-client.js';
import { bearer, expectProblem, injectFetch, serviceFixture, type ServiceFixture } from './http-fixtures.js';

// Webhook endpoints and deliveries over HTTP, operator keys only (docs/design/rules.md#h1–#h13).

let f: ServiceFixture | undefined;
let receiver: Receiver | undefined;
afterEach(async () => {
  await f?.close();
  await receiver?.close();
  f = undefined;
  receiver = undefined;
});

const OPS = { actor: 'ops', basis: 'asserted' } as const;

describe('webhooks over HTTP (H1, H8, H10–H12)', () => {
  it('H11/H12 add, list, rotate, list deliveries, resend and remove, each within the tenants the key covers; the metrics count attempts', async () => {
    f = await serviceFixture();
    receiver = await startReceiver();
    const added = await f.app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(f.key.opAcme), payload: { tenant: 'acme', url: receiver.url } });
    expect(added.statusCode).toBe(201);
    const { endpoint, secret } = added.json() as { endpoint: { id: string }; secret: string };
    expect(secret).toMatch(/^whsec_/);
    // A plane-wide endpoint needs a key of every tenant; another tenant's endpoint is not there.
    expectProblem(await f.app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(f.key.opAcme), payload: { tenant: null, url: receiver.url } }), 404, 'NOT_FOUND');
    expectProblem(await f.app.inject({ method: 'DELETE', url: `/v1/webhooks/${endpoint.id}`, headers: bearer(f.key.opGlobex) }), 404, 'NOT_FOUND');
    expectProblem(await f.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(f.key.runAcme) }), 404, 'NOT_FOUND');
    expectProblem(await f.app.inject({ method: 'POST', url: '/v1/webhooks', headers: bearer(f.key.opAll), payload: { tenant: 'acme', url: 'ftp://x' } }), 400, 'INVALID_ARGUMENT');
    expect((await f.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(f.key.opGlobex) })).json()).toEqual({ webhooks: [] });
    const listed = (await f.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(f.key.opAcme) })).json() as { webhooks: unknown[] };
    expect(listed.webhooks).toEqual([added.json().endpoint]);
    expect(JSON.stringify(listed)).not.toContain(secret.slice(6));

    const rotated = await f.app.inject({ method: 'POST', url: `/v1/webhooks/${endpoint.id}/rotate`, headers: bearer(f.key.opAcme), payload: { overlapMs: 60_000 } });
    expect(rotated.statusCode).toBe(200);
    expect((rotated.json() as { endpoint: { secrets: unknown[] } }).endpoint.secrets).toHaveLength(2);

    await f.plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident', by: OPS, newTenant: true });
    receiver.status = 500;
    const dispatcher = createDispatcher({ store: f.store, clock: f.clock, random: () => 0, onAttempt: (outcome) => f!.app.observeWebhookAttempt(outcome) });
    for (let attempt = 0; attempt < 16; attempt += 1) {
      await dispatcher.round();
      f.clock.advance(6 * 3_600_000);
    }
    const failed = await f.app.inject({ method: 'GET', url: `/v1/webhooks/${endpoint.id}/deliveries?status=failed`, headers: bearer(f.key.opAcme) });
    const [delivery] = (failed.json() as { deliveries: { id: string; status: string; event: { id: string } }[] }).deliveries;
    expect(delivery).toMatchObject({ status: 'failed', attempts: 16, lastResult: 'HTTP 500' });
    receiver.status = 200;
    const resent = await f.app.inject({ method: 'POST', url: `/v1/webhooks/deliveries/${delivery!.id}/resend`, headers: bearer(f.key.opAcme) });
    expect(resent.json()).toMatchObject({ status: 'pending', attempts: 0 });
    expectProblem(await f.app.inject({ method: 'POST', url: `/v1/webhooks/deliveries/${delivery!.id}/resend`, headers: bearer(f.key.opAcme) }), 409, 'CONFLICT');
    const garbage = expectProblem(await f.app.inject({ method: 'POST', url: '/v1/webhooks/deliveries/garbage/resend', headers: bearer(f.key.opAcme) }), 400, 'INVALID_ARGUMENT');
    expect(garbage.detail).toContain('deliveryId: must be a delivery id');
    await dispatcher.round();
    expect(receiver.received.at(-1)).toMatchObject({ status: 200, headers: { 'webhook-id': delivery!.event.id } });

    const metrics = (await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) })).body;
    expect(metrics).toContain('quotaplane_webhook_deliveries_total{outcome="failed_attempt"} 15');
    expect(metrics).toContain('quotaplane_webhook_deliveries_total{outcome="undeliverable"} 1');
    expect(metrics).toContain('quotaplane_webhook_deliveries_total{outcome="delivered"} 1');
    expect(metrics).toContain('quotaplane_webhook_oldest_undelivered_seconds 0');

    const removed = await f.app.inject({ method: 'DELETE', url: `/v1/webhooks/${endpoint.id}`, headers: bearer(f.key.opAcme) });
    expect(removed.json()).toEqual({ id: endpoint.id, removed: true });
    expectProblem(await f.app.inject({ method: 'GET', url: `/v1/webhooks/${endpoint.id}/deliveries`, headers: bearer(f.key.opAcme) }), 404, 'NOT_FOUND');
  });

  it('the client does what createWebhooks does, over HTTP', async () => {
    f = await serviceFixture();
    const client = createClient({ url: 'http://quotaplane.test', key: f.key.opAll.secret, fetch: injectFetch(f.app) });
    const { endpoint, secret } = await client.webhooks.add({ tenant: null, url: 'https://hooks.example.com/all' });
    expect(secret).toMatch(/^whsec_/);
    expect(await client.webhooks.list()).toEqual([endpoint]);
    expect(await client.webhooks.list('acme')).toEqual([]);
    expect(await client.webhooks.get(endpoint.id)).toEqual(endpoint);
    expect((await client.webhooks.rotate(endpoint.id, 0)).endpoint.secrets).toHaveLength(1);
    expect(await client.webhooks.deliveries(endpoint.id, { status: 'pending' })).toEqual([]);
    await client.webhooks.remove(endpoint.id);
    await expect(client.webhooks.get(endpoint.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(client.webhooks.resend(`${endpoint.id}.1`)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});
