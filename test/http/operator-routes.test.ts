import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { bearer, expectProblem, serviceFixture, T0, type ServiceFixture } from './http-fixtures.js';

describe('operator routes', () => {
  let f: ServiceFixture;
  beforeEach(async () => {
    f = await serviceFixture();
  });
  afterEach(() => f.close());

  const get = (url: string, key = f.key.opAcme) => f.app.inject({ method: 'GET', url, headers: bearer(key) });
  const send = (method: 'POST' | 'PUT', url: string, payload: object, key = f.key.opAcme) =>
    f.app.inject({ method, url, payload, headers: bearer(key) });

  it('GET quota answers null until one is set; PUT replaces it, normalised, audited under the key name as authenticated', async () => {
    expect((await get('/v1/tenants/acme/quota')).json()).toEqual({ tenant: 'acme', quota: null });
    const put = await send('PUT', '/v1/tenants/acme/quota', { maxConcurrentRuns: 3, maxTokensPerPeriod: 0 });
    expect(put.json()).toEqual({ tenant: 'acme', quota: { period: 'monthly', maxConcurrentRuns: 3, maxTokensPerPeriod: 0 } });
    expect((await get('/v1/tenants/acme/quota')).json()).toEqual(put.json());
    const [audit] = await f.store.tenant('acme').auditLog({ limit: 1 });
    expect(audit).toMatchObject({ action: 'quota.set', by: { actor: 'ops-acme', basis: 'authenticated' } });
  });

  it('PATCH quota (JSON Merge Patch) changes one ceiling and keeps the rest; null removes one; audited as quota.update with old and new', async () => {
    const grant = 'tool://payments/refund';
    await send('PUT', '/v1/tenants/acme/quota', { period: 'daily', maxConcurrentRuns: 4, maxTokensPerPeriod: 2_000_000, rateCeilings: { [grant]: [{ count: 20, windowSeconds: 3600 }] } });
    const patched = await f.app.inject({
      method: 'PATCH',
      url: '/v1/tenants/acme/quota',
      payload: JSON.stringify({ maxConcurrentRuns: 8, maxTokensPerPeriod: null }),
      headers: { ...bearer(f.key.opAcme), 'content-type': 'application/merge-patch+json' },
    });
    expect(patched.statusCode).toBe(200);
    const after = { period: 'daily', maxConcurrentRuns: 8, rateCeilings: { [grant]: [{ count: 20, windowSeconds: 3600 }] } };
    expect(patched.json()).toEqual({ tenant: 'acme', quota: after });
    expect((await get('/v1/tenants/acme/quota')).json()).toEqual({ tenant: 'acme', quota: after });
    const [audit] = await f.store.tenant('acme').auditLog({ limit: 1 });
    expect(audit).toMatchObject({
      action: 'quota.update',
      by: { actor: 'ops-acme', basis: 'authenticated' },
      detail: { old: { maxConcurrentRuns: 4, maxTokensPerPeriod: 2_000_000 }, new: after, patch: { maxConcurrentRuns: 8, maxTokensPerPeriod: null } },
    });
    const unknown = await f.app.inject({ method: 'PATCH', url: '/v1/tenants/acme/quota', payload: { maxConcurentRuns: 1 }, headers: bearer(f.key.opAcme) });
    expect(expectProblem(unknown, 400, 'INVALID_ARGUMENT').detail).toMatch(/maxConcurentRuns/);
    expect((await get('/v1/tenants/acme/quota')).json()).toEqual({ tenant: 'acme', quota: after });
  });

  it('PUT quota applies to the very next admission', async () => {
    await send('PUT', '/v1/tenants/acme/quota', { maxConcurrentRuns: 0 });
    const refused = await send('POST', '/v1/runs', { run: 'run-1' }, f.key.runAcme);
    expectProblem(refused, 429, 'TooManyRuns');
  });

  it('halts: throw with reach, list standing with what they cover, lift (journaled), list recorded lifts newest first', async () => {
    const thrown = await send('POST', '/v1/tenants/acme/halts', { scope: 'subject:user:alice', reason: 'laptop lost' });
    expect(thrown.json()).toEqual({
      scope: 'subject:user:alice',
      reason: 'laptop lost',
      by: { actor: 'ops-acme', basis: 'authenticated' },
      atMs: T0,
      reach: 'admission and running work',
      reachesRunning: true,
      running: 0,
    });
    await send('POST', '/v1/tenants/acme/halts', { scope: 'tenant', reason: 'maintenance' }, f.key.opAll);
    expect((await get('/v1/tenants/acme/halts')).json()).toEqual({
      halts: [
        {
          scope: 'subject:user:alice',
          covers: "everything acting for 'user:alice'",
          reason: 'laptop lost',
          by: { actor: 'ops-acme', basis: 'authenticated' },
          atMs: T0,
          reachesRunning: true,
        },
        {
          scope: 'tenant',
          covers: 'the whole tenant',
          reason: 'maintenance',
          by: { actor: 'ops-all', basis: 'authenticated' },
          atMs: T0,
          reachesRunning: false,
        },
      ],
      lifted: [],
      truncated: false,
    });
    f.clock.advance(1000);
    expect((await send('POST', '/v1/tenants/acme/halts/lift', { scope: 'tenant' })).json()).toEqual({ wasStanding: true, removed: true });
    expect((await send('POST', '/v1/tenants/acme/halts/lift', { scope: 'tenant' })).json()).toEqual({ wasStanding: false, removed: false });
    f.clock.advance(1000);
    await send('POST', '/v1/tenants/acme/halts/lift', { scope: 'subject:user:alice' });
    const lifted = (await get('/v1/tenants/acme/halts?state=lifted&limit=1')).json<{ lifted: { scope: string }[]; truncated: boolean }>();
    expect(lifted.lifted.map((row) => row.scope)).toEqual(['subject:user:alice']);
    expect(lifted.truncated).toBe(true);
    expect((await get('/v1/tenants/acme/halts?state=lifted')).json()).toMatchObject({
      halts: [],
      lifted: [
        { scope: 'subject:user:alice', by: { actor: 'ops-acme', basis: 'authenticated' }, liftedAtMs: T0 + 2000, thrownAtMs: T0 },
        { scope: 'tenant', reason: 'maintenance', thrownBy: { actor: 'ops-all', basis: 'authenticated' }, liftedAtMs: T0 + 1000 },
      ],
      truncated: false,
    });
  });

  it('C45 a halt with reachesRunning answers how many running runs it reaches; the run of that agent answers Withheld 423 naming the scope', async () => {
    await f.plane.setQuota('acme', { period: 'monthly' }, { newTenant: true });
    const clerk = { name: 'clerk', digest: 'c'.repeat(64) };
    await f.plane.admit({ tenant: 'acme', run: 'run-clerk', agent: clerk });
    await f.plane.admit({ tenant: 'acme', run: 'run-other', agent: { name: 'triage', digest: 'd'.repeat(64) } });
    const thrown = await send('POST', '/v1/tenants/acme/halts', { scope: 'agent:clerk', reason: 'loops', reachesRunning: true });
    expect(thrown.json()).toMatchObject({ scope: 'agent:clerk', reach: 'admission and running work', reachesRunning: true, running: 1 });
    const beat = await send('POST', '/v1/runs/run-clerk/heartbeat', { epoch: 1 }, f.key.runAcme);
    const problem = expectProblem(beat, 423, 'Withheld');
    expect(problem).toMatchObject({ scope: 'agent:clerk', reason: 'loops' });
    expect(problem.subject).toBeUndefined();
    expect((await send('POST', '/v1/runs/run-other/heartbeat', { epoch: 1 }, f.key.runAcme)).statusCode).toBe(200);
    const quiet = await send('POST', '/v1/tenants/acme/halts', { scope: 'tenant', reason: 'new work only' });
    expect(quiet.json()).toMatchObject({ scope: 'tenant', reach: 'admission', reachesRunning: false, running: 1 });
    expectProblem(await send('POST', '/v1/tenants/acme/halts', { scope: 'tenant', reason: 'x', reachesRunning: 'yes' }), 400, 'INVALID_ARGUMENT');
  });

  it('a halt scope the plane cannot read is 400 naming scope, listing the forms', async () => {
    const problem = expectProblem(await send('POST', '/v1/tenants/acme/halts', { scope: 'everything', reason: 'x' }), 400, 'INVALID_ARGUMENT');
    expect(problem.field).toBe('scope');
    expect(problem.detail).toContain("'agent:<metadata.name>'");
  });

  it('slots and reservations list slot holders and holds in run order, with truncated read from one extra row', async () => {
    await f.plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 100_000 }, { newTenant: true });
    for (const run of ['run-c', 'run-a', 'run-b']) await f.plane.admit({ tenant: 'acme', run, budget: { maxTokens: 10, maxCallTokens: 1 } });
    expect((await get('/v1/tenants/acme/slots?limit=2')).json()).toEqual({ runs: ['run-a', 'run-b'], truncated: true });
    expect((await get('/v1/tenants/acme/slots?limit=3')).json()).toEqual({ runs: ['run-a', 'run-b', 'run-c'], truncated: false });
    expect((await get('/v1/tenants/acme/reservations?limit=1')).json()).toEqual({
      reservations: [{ run: 'run-a', period: '2026-01', remaining: { tokens: 11, minorUnits: 0 } }],
      truncated: true,
    });
  });

  it('GET /v1/tenants lists what the key covers: every tenant for an all-tenant key, at most its own otherwise', async () => {
    await f.plane.setQuota('acme', { period: 'monthly' }, { newTenant: true });
    await f.plane.setQuota('globex', { period: 'monthly' }, { newTenant: true });
    await f.plane.setQuota('initech', { period: 'monthly' }, { newTenant: true });
    expect((await get('/v1/tenants', f.key.opAll)).json()).toEqual({ tenants: ['acme', 'globex', 'initech'] });
    expect((await get('/v1/tenants', f.key.opAcme)).json()).toEqual({ tenants: ['acme'] });
  });

  it('GET /v1/tenants/{tenant}/usage answers the tenant figures; a tenant id with a slash travels encoded', async () => {
    await f.plane.admit({ tenant: 'team/blue', run: 'run-1' });
    const response = await get('/v1/tenants/team%2Fblue/usage', f.key.opAll);
    expect(response.json()).toMatchObject({ tenant: 'team/blue', period: '2026-01', running: 1 });
  });
});
