import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';

import { WEBHOOK_MAX_ATTEMPTS, WEBHOOK_MAX_RETRY_MS } from '../../src/core/webhook-retry.js';
import { createDispatcher, type Dispatcher } from '../../src/plane/webhook-dispatcher.js';
import { createWebhooks, type WebhookAdmin } from '../../src/plane/webhooks.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import type { QuotaEvent } from '../../src/core/events.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { BACKENDS, type SharedStore } from './backends.js';
import { ALICE } from './plane-fixtures.js';
import { startReceiver, verifyWebhook, type Receiver } from './webhook-fixtures.js';

// Webhook deliveries (docs/design/rules.md#h1–#h13), against a real local HTTP server, on each
// backend, of real events: halts thrown and lifted through the plane write `halt.set` and
// `halt.lifted` (rules E6). The clock is virtual (near the real one, so the signatures' 5-minute
// window holds).

for (const backend of BACKENDS) {
  describe(`webhook deliveries on ${backend.name}`, () => {
    let shared: SharedStore;
    let stores: QuotaStore[];
    let store: QuotaStore;
    let clock: ManualClock;
    let plane: Plane;
    let receiver: Receiver;
    let hooks: WebhookAdmin;

    const dispatcher = (over: QuotaStore = store): Dispatcher =>
      createDispatcher({ store: over, clock, random: () => 0.5, timeoutMs: 2_000, leaseMs: 30_000 });

    beforeEach(async () => {
      shared = await backend.fresh('webhooks');
      store = await openStore(shared.url, shared.options);
      stores = [store];
      clock = new ManualClock(Date.now());
      plane = createPlane({ store, clock });
      receiver = await startReceiver();
      hooks = createWebhooks({ store, clock });
      // An endpoint names a tenant that exists (an unknown one is refused as a likely typo).
      for (const tenant of ['acme', 'globex']) await plane.setQuota(tenant, { maxConcurrentRuns: 100 }, { by: ALICE, newTenant: true });
    });

    /** The event the store wrote last. */
    const lastEvent = async (): Promise<QuotaEvent> => (await store.eventsAfter!(0, 10_000)).at(-1)!;
    /** Throws a halt on `tenant` through the plane: a `halt.set` event. */
    const halt = async (tenant: string, reason = 'incident'): Promise<QuotaEvent> => {
      await plane.halt({ tenant, scope: 'tenant', reason, by: ALICE, newTenant: true });
      return lastEvent();
    };
    /** Lifts the halt on `tenant` through the plane: a `halt.lifted` event. */
    const lift = async (tenant: string): Promise<QuotaEvent> => {
      await plane.lift({ tenant, scope: 'tenant', by: ALICE });
      return lastEvent();
    };

    afterEach(async () => {
      await receiver.close();
      for (const one of stores) await one.close();
      await shared.remove();
    });

    it('H13 an endpoint down for a while, then up, receives each event once, under its original id', async () => {
      const { endpoint } = await hooks.add({ tenant: 'acme', url: receiver.url });
      const set = await halt('acme');
      const lifted = await lift('acme');
      await halt('globex');
      receiver.status = 503;
      const one = dispatcher();
      expect(await one.round()).toEqual({ fannedOut: 2, attempted: 2 });
      for (let round = 0; round < 4; round += 1) {
        if (round === 2) receiver.status = 200;
        clock.advance(WEBHOOK_MAX_RETRY_MS);
        await one.round();
      }
      expect(await one.round()).toEqual({ fannedOut: 0, attempted: 0 });
      const ids = receiver.received.map((request) => request.headers['webhook-id']);
      expect(new Set(ids)).toEqual(new Set([set.id, lifted.id]));
      const delivered = receiver.received.filter((request) => request.status === 200).map((request) => request.headers['webhook-id']);
      expect(delivered.sort()).toEqual([set.id, lifted.id].sort());
      const listed = await hooks.deliveries(endpoint.id);
      expect(listed.map((delivery) => [delivery.event.id, delivery.status, delivery.attempts])).toEqual([
        [lifted.id, 'delivered', 4],
        [set.id, 'delivered', 4],
      ]);
      // The body is the event's, the same on every attempt.
      const bodies = receiver.received.filter((request) => request.headers['webhook-id'] === set.id).map((request) => request.body);
      expect(new Set(bodies).size).toBe(1);
      expect(JSON.parse(bodies[0]!)).toEqual({
        type: 'halt.set',
        timestamp: new Date(set.atMs).toISOString(),
        data: { ...set.data, tenant: 'acme', seq: set.seq },
      });
    });

    it('H7 two dispatchers on one store never both send a delivery while its claim stands', async () => {
      const second = await openStore(shared.url, shared.options);
      stores.push(second);
      await hooks.add({ tenant: null, url: receiver.url });
      for (let n = 0; n < 6; n += 1) await halt(`t${n}`);
      const [a, b] = [dispatcher(store), dispatcher(second)];
      receiver.hold = true;
      const first = a.round();
      while (receiver.held() < 6) await new Promise((resolve) => setTimeout(resolve, 10));
      // Every delivery is claimed by a and in flight: b finds none due.
      expect(await b.round()).toEqual({ fannedOut: 0, attempted: 0 });
      receiver.hold = false;
      receiver.release();
      expect((await first).attempted).toBe(6);
      // Together, on new events: each delivery is sent by exactly one of them.
      for (let n = 0; n < 6; n += 1) await lift(`t${n}`);
      for (let n = 6; n < 20; n += 1) await halt(`t${n}`);
      const both = await Promise.all([a.round(), b.round()]);
      expect(both[0].attempted + both[1].attempted).toBe(20);
      const ids = receiver.received.map((request) => request.headers['webhook-id']);
      expect(ids.length).toBe(26);
      expect(new Set(ids).size).toBe(26);
    });

    it('H7 a claim whose dispatcher died lapses with its lease: another sends the delivery, and the late report is ignored', async () => {
      await hooks.add({ tenant: 'acme', url: receiver.url });
      const event = await halt('acme');
      const webhooks = store.webhooks!();
      await webhooks.fanOut((await webhooks.lowestCursor())!, await store.eventsAfter!(0, 100), clock.nowMs());
      const [stale] = await webhooks.claimDue(clock.nowMs(), 30_000, 10, 'dead-dispatcher');
      expect(stale?.delivery.event.id).toBe(event.id);
      const other = dispatcher();
      clock.advance(29_999);
      expect((await other.round()).attempted).toBe(0);
      clock.advance(1);
      expect((await other.round()).attempted).toBe(1);
      expect(receiver.received.map((request) => request.headers['webhook-id'])).toEqual([event.id]);
      const late = { deliveryId: stale!.delivery.id, claim: 'dead-dispatcher', atMs: clock.nowMs(), outcome: { kind: 'failed' as const }, result: 'HTTP 500' };
      expect(await webhooks.recordAttempt(late)).toBe(false);
      expect(await webhooks.delivery(stale!.delivery.id)).toMatchObject({ status: 'delivered', attempts: 1 });
    });

    it('H3 a timeout or a 3xx is a failed attempt, retried later under the same id', async () => {
      const { endpoint } = await hooks.add({ tenant: 'acme', url: receiver.url });
      const event = await halt('acme');
      receiver.hold = true;
      const impatient = createDispatcher({ store, clock, random: () => 0.5, timeoutMs: 200, leaseMs: 30_000 });
      expect((await impatient.round()).attempted).toBe(1);
      receiver.hold = false;
      receiver.release();
      const [timedOut] = await hooks.deliveries(endpoint.id);
      expect(timedOut).toMatchObject({ status: 'pending', attempts: 1, lastResult: 'timeout after 200 ms', dueAtMs: clock.nowMs() + 15_000 });
      receiver.status = 302;
      clock.advance(15_000);
      expect((await impatient.round()).attempted).toBe(1);
      expect(await hooks.deliveries(endpoint.id)).toMatchObject([{ status: 'pending', attempts: 2, lastResult: 'HTTP 302' }]);
      expect(new Set(receiver.received.map((request) => request.headers['webhook-id']))).toEqual(new Set([event.id]));
    });

    it('H6 a polling dispatcher delivers to a healthy endpoint within a second while another endpoint hangs', async () => {
      const slow = await startReceiver();
      slow.hold = true;
      try {
        await hooks.add({ tenant: 'acme', url: slow.url });
        await hooks.add({ tenant: 'acme', url: receiver.url });
        const polling = createDispatcher({ store, timeoutMs: 5_000, leaseMs: 30_000 });
        polling.start();
        try {
          // Each event reaches the healthy endpoint within a second, the second too, while the
          // slow endpoint still holds the first.
          for (const [n, write] of [[1, () => halt('acme')], [2, () => lift('acme')]] as const) {
            await write();
            const startedMs = Date.now();
            while (receiver.received.length < n && Date.now() - startedMs < 2_000) await new Promise((resolve) => setTimeout(resolve, 10));
            expect(receiver.received).toHaveLength(n);
            expect(Date.now() - startedMs).toBeLessThan(1_000);
          }
          expect(slow.held()).toBeGreaterThanOrEqual(1);
        } finally {
          slow.hold = false;
          slow.release();
          await polling.stop();
        }
      } finally {
        await slow.close();
      }
    });

    it('H9 a delivery verifies with standardwebhooks and the guide’s verifier; a tampered body fails both', async () => {
      const { secret } = await hooks.add({ tenant: 'acme', url: receiver.url });
      await halt('acme', 'incident 80');
      await dispatcher().round();
      const [request] = receiver.received;
      const headers = request!.headers;
      expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
      expect(new Webhook(secret).verify(request!.body, headers)).toMatchObject({ type: 'halt.set' });
      expect(verifyWebhook(secret, headers, request!.body)).toBe(true);
      const tampered = request!.body.replace('incident 80', 'incident 81');
      expect(() => new Webhook(secret).verify(tampered, headers)).toThrow(/No matching signature/);
      expect(verifyWebhook(secret, headers, tampered)).toBe(false);
    });

    it('H10 during a rotation’s overlap both secrets verify a delivery; after it only the new one', async () => {
      const { endpoint, secret: old } = await hooks.add({ tenant: 'acme', url: receiver.url });
      const { secret: fresh } = await hooks.rotate(endpoint.id, 60_000);
      const one = dispatcher();
      await halt('acme');
      await one.round();
      const during = receiver.received[0]!;
      expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
      for (const secret of [old, fresh]) {
        expect(() => new Webhook(secret).verify(during.body, during.headers)).not.toThrow();
        expect(verifyWebhook(secret, during.headers, during.body, clock.nowMs())).toBe(true);
      }
      clock.advance(60_000);
      await lift('acme');
      await one.round();
      const after = receiver.received[1]!;
      expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
      expect(verifyWebhook(fresh, after.headers, after.body, clock.nowMs())).toBe(true);
      expect(verifyWebhook(old, after.headers, after.body, clock.nowMs())).toBe(false);
      expect(() => new Webhook(old).verify(after.body, after.headers)).toThrow();
    });

    it('H11 a delivery out of attempts is failed and listed; H12 resend delivers it under the same id', async () => {
      const { endpoint } = await hooks.add({ tenant: 'acme', url: receiver.url });
      const event = await halt('acme');
      receiver.status = 500;
      const one = dispatcher();
      for (let attempt = 0; attempt < WEBHOOK_MAX_ATTEMPTS; attempt += 1) {
        expect((await one.round()).attempted).toBe(1);
        clock.advance(WEBHOOK_MAX_RETRY_MS);
      }
      expect((await one.round()).attempted).toBe(0);
      const [failed] = await hooks.deliveries(endpoint.id, { status: 'failed' });
      expect(failed).toMatchObject({ status: 'failed', attempts: WEBHOOK_MAX_ATTEMPTS, lastResult: 'HTTP 500' });
      expect(await hooks.deliveries(endpoint.id, { status: 'pending' })).toEqual([]);
      receiver.status = 204;
      const resent = await hooks.resend(failed!.id);
      expect(resent).toMatchObject({ status: 'pending', attempts: 0 });
      await expect(hooks.resend(failed!.id)).rejects.toMatchObject({ code: 'CONFLICT' });
      expect((await one.round()).attempted).toBe(1);
      const last = receiver.received.at(-1)!;
      expect(last.status).toBe(204);
      expect(last.headers['webhook-id']).toBe(event.id);
      expect(new Set(receiver.received.map((request) => request.headers['webhook-id']))).toEqual(new Set([event.id]));
      expect(await hooks.deliveries(endpoint.id)).toMatchObject([{ status: 'delivered', attempts: 1 }]);
    });

    it('H1 a new endpoint starts after the newest event; a tenant endpoint hears its tenant only, a plane-wide one every tenant and the plane', async () => {
      const before = await halt('acme');
      const mine = await hooks.add({ tenant: 'acme', url: `${receiver.url}?acme` });
      const all = await hooks.add({ tenant: null, url: `${receiver.url}?plane`, eventTypes: ['halt.set'] });
      const acme = await lift('acme');
      const globex = await halt('globex');
      await plane.haltPlane({ reason: 'maintenance', by: ALICE });
      const wide = await lastEvent();
      expect(wide).toMatchObject({ type: 'halt.set', tenant: null });
      await dispatcher().round();
      const ids = (endpointId: string) => hooks.deliveries(endpointId).then((list) => list.map((delivery) => delivery.event.id).sort());
      expect(await ids(mine.endpoint.id)).toEqual([acme.id]);
      expect(await ids(all.endpoint.id)).toEqual([globex.id, wide.id].sort());
      expect(receiver.received.map((request) => request.headers['webhook-id'])).not.toContain(before.id);
    });

    it("H1 a tenant's deletion removes its own endpoints and their deliveries; a plane-wide endpoint keeps its own", async () => {
      const mine = await hooks.add({ tenant: 'acme', url: receiver.url });
      const all = await hooks.add({ tenant: null, url: receiver.url });
      await halt('acme');
      await lift('acme');
      await dispatcher().round();
      await plane.deleteTenant({ tenant: 'acme', by: ALICE, reason: 'customer left' });
      expect((await hooks.list()).map((endpoint) => endpoint.id)).toEqual([all.endpoint.id]);
      await expect(hooks.deliveries(mine.endpoint.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
      expect(await hooks.deliveries(all.endpoint.id)).toHaveLength(2);
    });

    it('H8 an added endpoint has a whsec_ secret of at least 24 random bytes; listing never shows it; bad input names the field', async () => {
      const { endpoint, secret } = await hooks.add({ tenant: null, url: receiver.url, eventTypes: ['halt.set'] });
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(secret.slice('whsec_'.length), 'base64').length).toBeGreaterThanOrEqual(24);
      expect(JSON.stringify(await hooks.list())).not.toContain(secret.slice(6));
      expect(await hooks.list(null)).toEqual([endpoint]);
      expect(await hooks.list('acme')).toEqual([]);
      await expect(hooks.add({ tenant: 'acme', url: 'ftp://x' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'url' } });
      await expect(hooks.add({ tenant: 'acmee', url: receiver.url })).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining("'acme'") });
      await expect(hooks.add({ tenant: 'acme', url: receiver.url, eventTypes: ['nope'] })).rejects.toMatchObject({ details: { field: 'eventTypes' } });
      await hooks.remove(endpoint.id);
      await expect(hooks.remove(endpoint.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    });
  });
}
