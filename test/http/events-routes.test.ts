import { afterEach, describe, expect, it } from 'vitest';

import { createClient } from '../../src/client/create-client.js';
import { bearer, expectProblem, injectFetch, serviceFixture, type ServiceFixture } from './http-fixtures.js';

// The event log and spend alerts over HTTP and through the client (docs/design/rules.md#e7, #e8).

let f: ServiceFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const OPS = { actor: 'ops', basis: 'asserted' } as const;

async function spend(fixture: ServiceFixture, run: string, tokens: number): Promise<void> {
  const admitted = await fixture.plane.admit({ tenant: 'acme', run, budget: { maxTokens: tokens, maxCallTokens: 0, maxMinorUnits: 0, maxCallMinorUnits: 0 } });
  if (!admitted.ok) throw new Error(JSON.stringify(admitted));
  const settled = await fixture.plane.settle({ tenant: 'acme', run, epoch: 1, spend: { tokens, minorUnits: 0 }, concludes: true });
  expect(settled).toMatchObject({ ok: true });
}

describe('events over HTTP (E8)', () => {
  it('GET /v1/events pages every event by cursor for an operator of every tenant; a tenant operator reads its own', async () => {
    f = await serviceFixture();
    await f.plane.setQuota('acme', { maxTokensPerPeriod: 1000 }, { by: OPS, newTenant: true });
    await f.plane.setQuota('globex', { maxTokensPerPeriod: 10 }, { by: OPS, newTenant: true });
    await spend(f, 'run-1', 850);
    await f.plane.halt({ tenant: 'globex', scope: 'tenant', reason: 'incident', by: OPS });

    const all = await f.app.inject({ method: 'GET', url: '/v1/events', headers: bearer(f.key.opAll) });
    expect(all.statusCode).toBe(200);
    const page = all.json() as { events: { seq: number; type: string; tenant: string | null; id: string }[]; next: number; truncated: boolean };
    expect(page.events.map((event) => [event.type, event.tenant])).toEqual([
      ['threshold.crossed', 'acme'],
      ['halt.set', 'globex'],
    ]);
    expect(page.next).toBe(page.events[1]?.seq);
    expect(page.truncated).toBe(false);

    const first = await f.app.inject({ method: 'GET', url: '/v1/events?limit=1', headers: bearer(f.key.opAll) });
    expect(first.json()).toMatchObject({ truncated: true, next: page.events[0]?.seq });
    const rest = await f.app.inject({ method: 'GET', url: `/v1/events?after=${page.events[0]?.seq}`, headers: bearer(f.key.opAll) });
    expect((rest.json() as typeof page).events.map((event) => event.id)).toEqual([page.events[1]?.id]);

    const tail = await f.app.inject({ method: 'GET', url: '/v1/events?last=1', headers: bearer(f.key.opAll) });
    expect(tail.json()).toEqual({ events: [page.events[1]].map((event) => ({ ...event })), next: page.events[1]?.seq, truncated: false });
    expectProblem(await f.app.inject({ method: 'GET', url: '/v1/events?last=1&after=0', headers: bearer(f.key.opAll) }), 400, 'INVALID_ARGUMENT');
    expect((await f.app.inject({ method: 'GET', url: '/v1/tenants/globex/events?last=5', headers: bearer(f.key.opAll) })).json()).toMatchObject({ events: [{ type: 'halt.set' }] });
    const own = await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/events', headers: bearer(f.key.opAcme) });
    expect((own.json() as typeof page).events.map((event) => event.type)).toEqual(['threshold.crossed']);
    expectProblem(await f.app.inject({ method: 'GET', url: '/v1/events', headers: bearer(f.key.opAcme) }), 404, 'NOT_FOUND');
    expectProblem(await f.app.inject({ method: 'GET', url: '/v1/tenants/globex/events', headers: bearer(f.key.opAcme) }), 404, 'NOT_FOUND');
    expectProblem(await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/events', headers: bearer(f.key.runAcme) }), 404, 'NOT_FOUND');
    expectProblem(await f.app.inject({ method: 'GET', url: '/v1/events?after=-1', headers: bearer(f.key.opAll) }), 400, 'INVALID_ARGUMENT');
    const past = expectProblem(await f.app.inject({ method: 'GET', url: `/v1/events?after=${page.next + 50}`, headers: bearer(f.key.opAll) }), 409, 'CONFLICT');
    expect(past.detail).toContain(`past the newest event of this store (${page.next})`);
    expect((await f.app.inject({ method: 'GET', url: `/v1/events?after=${page.next}`, headers: bearer(f.key.opAll) })).json()).toMatchObject({ events: [], next: page.next });

    const client = createClient({ url: 'http://quotaplane.test', key: f.key.opAll.secret, fetch: injectFetch(f.app) });
    expect(await client.events({ after: 0 })).toEqual(await f.plane.events({ after: 0 }));
    expect(await client.events({ tenant: 'acme' })).toEqual(await f.plane.events({ tenant: 'acme' }));
  });

  it('a plane-wide halt is an event of the plane (tenant null)', async () => {
    f = await serviceFixture();
    await f.app.inject({ method: 'POST', url: '/v1/plane/halt', headers: bearer(f.key.opAll), payload: { reason: 'drill' } });
    await f.app.inject({ method: 'POST', url: '/v1/plane/halt/lift', headers: bearer(f.key.opAll), payload: {} });
    const events = (await f.plane.events()).events;
    expect(events.map((event) => [event.type, event.tenant])).toEqual([
      ['halt.set', null],
      ['halt.lifted', null],
    ]);
    expect(events[0]?.data).toMatchObject({ scope: 'plane', by: { actor: 'ops-all', basis: 'authenticated' } });
  });
});

describe('plane-wide default thresholds (E5.1)', () => {
  it('set after usage passed them, they fire at once for every tenant that inherits them, and only once', async () => {
    f = await serviceFixture();
    await f.plane.setQuota('acme', { maxTokensPerPeriod: 1000 }, { by: OPS, newTenant: true });
    await f.plane.setQuota('globex', { maxTokensPerPeriod: 1000, alertThresholds: [] }, { by: OPS, newTenant: true });
    await spend(f, 'run-1', 600);
    expect((await f.plane.events()).events).toEqual([]);
    const patch = { method: 'PATCH' as const, url: '/v1/plane/ceiling', headers: { ...bearer(f.key.opAll), 'content-type': 'application/merge-patch+json' } };
    expect((await f.app.inject({ ...patch, payload: { alertThresholds: [{ percent: 50 }] } })).statusCode).toBe(200);
    const fired = (await f.plane.events()).events;
    expect(fired.map((event) => [event.type, event.tenant, (event.data as { threshold: unknown }).threshold])).toEqual([['threshold.crossed', 'acme', { percent: 50 }]]);
    await f.app.inject({ ...patch, payload: { alertThresholds: [{ percent: 50 }, { percent: 55 }] } });
    expect((await f.plane.events()).events.map((event) => (event.data as { threshold: unknown }).threshold)).toEqual([{ percent: 50 }, { percent: 55 }]);
    await f.app.inject({ ...patch, payload: { maxConcurrentRuns: 10 } });
    expect((await f.plane.events()).events).toHaveLength(2);
  });
});

describe('alerts over HTTP (E7)', () => {
  it('GET /v1/tenants/{tenant}/alerts answers each ceiling with its thresholds, amounts, source and which are crossed', async () => {
    f = await serviceFixture();
    await f.plane.setQuota(
      'acme',
      { maxTokensPerPeriod: 1000, maxMinorUnitsPerPeriod: 500, agents: { bot: { maxTokensPerPeriod: 100, alertThresholds: [{ percent: 50 }] } } },
      { by: OPS, newTenant: true },
    );
    await spend(f, 'run-1', 850);
    const reply = await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/alerts', headers: bearer(f.key.opAcme) });
    expect(reply.statusCode).toBe(200);
    const alerts = reply.json() as { period: string; ceilings: unknown[] };
    expect(alerts.ceilings).toEqual([
      {
        agent: null,
        unit: 'tokens',
        ceiling: 1000,
        settled: 850,
        source: 'default',
        thresholds: [
          { threshold: { percent: 80 }, label: '80%', amount: 800, crossed: true },
          { threshold: { percent: 100 }, label: '100%', amount: 1000, crossed: false },
        ],
      },
      {
        agent: null,
        unit: 'minorUnits',
        ceiling: 500,
        settled: 0,
        source: 'default',
        thresholds: [
          { threshold: { percent: 80 }, label: '80%', amount: 400, crossed: false },
          { threshold: { percent: 100 }, label: '100%', amount: 500, crossed: false },
        ],
      },
      { agent: 'bot', unit: 'tokens', ceiling: 100, settled: 0, source: 'agent', thresholds: [{ threshold: { percent: 50 }, label: '50%', amount: 50, crossed: false }] },
    ]);
    const client = createClient({ url: 'http://quotaplane.test', key: f.key.opAcme.secret, fetch: injectFetch(f.app) });
    expect(await client.alerts({ tenant: 'acme' })).toEqual(alerts);
    const refused = await f.app.inject({ method: 'PUT', url: '/v1/tenants/acme/quota', headers: bearer(f.key.opAcme), payload: { alertThresholds: [{ percent: 0 }] } });
    expect(expectProblem(refused, 400, 'INVALID_ARGUMENT').detail).toContain('alertThresholds[0].percent');
    const amount = await f.app.inject({ method: 'PUT', url: '/v1/tenants/acme/quota', headers: bearer(f.key.opAcme), payload: { alertThresholds: [{ percent: 80 }, { tokens: 0 }] } });
    expect(expectProblem(amount, 400, 'INVALID_ARGUMENT').detail).toContain('alertThresholds[1].tokens');
    const two = await f.app.inject({ method: 'PUT', url: '/v1/tenants/acme/quota', headers: bearer(f.key.opAcme), payload: { alertThresholds: [{ percent: 80, tokens: 5 }] } });
    expect(expectProblem(two, 400, 'INVALID_ARGUMENT').detail).toContain('alertThresholds[0]');
  });
});
