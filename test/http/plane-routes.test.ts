import { afterEach, describe, expect, it } from 'vitest';

import { createClient } from '../../src/client/create-client.js';
import { bearer, expectProblem, injectFetch, serviceFixture, type ServiceFixture } from './http-fixtures.js';

// Over HTTP: the plane-wide ceiling (GET /v1/plane, PUT/PATCH /v1/plane/ceiling) for
// operator keys of every tenant, the bound of a refusal in its problem details and through the
// client, per-agent figures in usage, and the plane-wide and per-agent gauges on /metrics.

let f: ServiceFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const REFUND_BOT = { name: 'refund-bot', digest: 'ab'.repeat(32) };

describe('the plane-wide ceiling over HTTP', () => {
  it('PUT sets it (audited as plane.set in quotaplane:plane under the key name), PATCH merges, GET shows it with the running slots', async () => {
    f = await serviceFixture();
    const none = await f.app.inject({ method: 'GET', url: '/v1/plane', headers: bearer(f.key.opAll) });
    expect(none.json()).toEqual({ ceiling: null, running: 0, limit: null, agents: [], halt: null });

    const put = await f.app.inject({
      method: 'PUT',
      url: '/v1/plane/ceiling',
      headers: bearer(f.key.opAll),
      payload: { maxConcurrentRuns: 2, agents: { 'refund-bot': { maxConcurrentRuns: 1 } }, weights: { acme: 2 } },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toEqual({ ceiling: { maxConcurrentRuns: 2, agents: { 'refund-bot': { maxConcurrentRuns: 1 } }, weights: { acme: 2 } } });
    const [row] = await f.store.tenant('quotaplane:plane').auditLog({ limit: 1 });
    expect(row).toMatchObject({ action: 'plane.set', subject: 'plane', by: { actor: 'ops-all', basis: 'authenticated' } });

    const patch = await f.app.inject({
      method: 'PATCH',
      url: '/v1/plane/ceiling',
      headers: { ...bearer(f.key.opAll), 'content-type': 'application/merge-patch+json' },
      payload: { maxConcurrentRuns: 3, weights: { acme: null } },
    });
    expect(patch.json()).toEqual({ ceiling: { maxConcurrentRuns: 3, agents: { 'refund-bot': { maxConcurrentRuns: 1 } } } });

    await f.plane.admit({ tenant: 'acme', run: 'run-1', agent: REFUND_BOT });
    const status = await f.app.inject({ method: 'GET', url: '/v1/plane', headers: bearer(f.key.opAll) });
    expect(status.json()).toEqual({
      ceiling: { maxConcurrentRuns: 3, agents: { 'refund-bot': { maxConcurrentRuns: 1 } } },
      running: 1,
      limit: 3,
      agents: [{ agent: 'refund-bot', running: 1, limit: 1 }],
      halt: null,
    });
  });

  it('C49 C51 C45 POST /v1/plane/halt refuses admissions of every tenant (423 naming scope plane), counts the running runs, shows in GET /v1/plane, and lifts', async () => {
    f = await serviceFixture();
    await f.plane.admit({ tenant: 'acme', run: 'run-a' });
    await f.plane.admit({ tenant: 'globex', run: 'run-g' });
    const send = (url: string, payload: object, key = f!.key.opAll) => f!.app.inject({ method: 'POST', url, headers: bearer(key), payload });
    expectProblem(await send('/v1/plane/halt', { reason: 'provider outage' }, f.key.opAcme), 404, 'NOT_FOUND');
    const thrown = await send('/v1/plane/halt', { reason: 'provider outage', reachesRunning: true });
    expect(thrown.json()).toEqual({
      scope: 'plane',
      reason: 'provider outage',
      by: { actor: 'ops-all', basis: 'authenticated' },
      atMs: expect.any(Number),
      reach: 'admission and running work',
      reachesRunning: true,
      running: 2,
    });
    const refused = expectProblem(await send('/v1/runs', { run: 'run-b' }, f.key.runAcme), 423, 'Halted');
    expect(refused).toMatchObject({ tenant: 'acme', scope: 'plane', reason: 'provider outage' });
    expect(String(refused.detail)).toContain('every tenant of the plane is halted by an operator');
    expectProblem(await send('/v1/runs/run-a/heartbeat', { epoch: 1 }, f.key.runAcme), 423, 'Withheld');
    const status = (await f.app.inject({ method: 'GET', url: '/v1/plane', headers: bearer(f.key.opAll) })).json();
    expect(status.halt).toEqual({ reason: 'provider outage', by: { actor: 'ops-all', basis: 'authenticated' }, atMs: expect.any(Number), reachesRunning: true });
    expect((await send('/v1/plane/halt/lift', {})).json()).toEqual({ wasStanding: true, removed: true });
    expect((await send('/v1/plane/halt/lift', {})).json()).toEqual({ wasStanding: false, removed: false });
    expect((await send('/v1/runs', { run: 'run-b' }, f.key.runAcme)).statusCode).toBe(200);
    const audit = (await f.app.inject({ method: 'GET', url: '/v1/tenants/quotaplane:plane/audit', headers: bearer(f.key.opAll) })).json();
    expect(audit.rows.map((row: { action: string }) => row.action)).toEqual(['plane.lift', 'plane.halt']);

    const client = createClient({ url: 'http://quotaplane.test', key: f.key.opAll.secret, fetch: injectFetch(f.app) });
    expect(await client.haltPlane({ reason: 'maintenance' })).toMatchObject({ scope: 'plane', reach: 'admission', reachesRunning: false, running: 2 });
    expect(await client.planeHalt()).toMatchObject({ scope: { kind: 'plane' }, reason: 'maintenance' });
    expect(await client.liftPlaneHalt()).toEqual({ wasStanding: true, removed: true });
    expect(await client.planeHalt()).toBeNull();
  });

  it('a key that does not cover every tenant gets 404, and a bad ceiling is 400 naming the field', async () => {
    f = await serviceFixture();
    expectProblem(await f.app.inject({ method: 'GET', url: '/v1/plane', headers: bearer(f.key.opAcme) }), 404, 'NOT_FOUND');
    expectProblem(
      await f.app.inject({ method: 'PUT', url: '/v1/plane/ceiling', headers: bearer(f.key.runAcme), payload: { maxConcurrentRuns: 1 } }),
      404,
      'NOT_FOUND',
    );
    const bad = expectProblem(
      await f.app.inject({ method: 'PUT', url: '/v1/plane/ceiling', headers: bearer(f.key.opAll), payload: { maxConcurrentRuns: -1 } }),
      400,
      'INVALID_ARGUMENT',
    );
    expect(String(bad.detail)).toContain('maxConcurrentRuns');
    expect(await f.plane.getPlaneCeiling()).toBeNull();
  });

  it('a refusal names its bound in the problem details, and the client decodes it as the plane answers it', async () => {
    f = await serviceFixture();
    await f.plane.setPlaneCeiling({ maxConcurrentRuns: 1 });
    await f.plane.admit({ tenant: 'globex', run: 'run-g' });
    const refused = await f.app.inject({ method: 'POST', url: '/v1/runs', headers: bearer(f.key.runAcme), payload: { run: 'run-a' } });
    const problem = expectProblem(refused, 429, 'TooManyRuns');
    expect(problem).toMatchObject({ tenant: 'acme', running: 1, limit: 1, bound: 'plane' });
    expect(String(problem.detail)).toContain('plane-wide limit is 1');

    await f.plane.setQuota('acme', { period: 'monthly', agents: { 'refund-bot': { maxConcurrentRuns: 0 } } }, { newTenant: true });
    const client = createClient({ url: 'http://quotaplane.test', key: f.key.runAcme.secret, fetch: injectFetch(f.app) });
    const viaClient = await client.admit({ tenant: 'acme', run: 'run-b', agent: REFUND_BOT });
    expect(viaClient.ok === false && viaClient.refusal).toEqual({ code: 'TooManyRuns', tenant: 'acme', running: 0, limit: 0, bound: 'agent', agent: 'refund-bot' });
  });

  it('usage shows each agent with ceilings, and /metrics the plane-wide and per-agent gauges and refusals by bound', async () => {
    f = await serviceFixture();
    await f.plane.setPlaneCeiling({ maxConcurrentRuns: 5, agents: { 'refund-bot': { maxConcurrentRuns: 2 } } });
    await f.plane.setQuota('acme', { period: 'monthly', agents: { 'refund-bot': { maxConcurrentRuns: 1, maxTokensPerPeriod: 900 } } }, { newTenant: true });
    await f.plane.admit({ tenant: 'acme', run: 'run-1', agent: REFUND_BOT, budget: { maxTokens: 300, maxCallTokens: 0 } });
    const refused = await f.app.inject({
      method: 'POST',
      url: '/v1/runs',
      headers: bearer(f.key.runAcme),
      payload: { run: 'run-2', agent: REFUND_BOT, budget: { maxTokens: 300, maxCallTokens: 0 } },
    });
    expect(expectProblem(refused, 429, 'TooManyRuns')).toMatchObject({ bound: 'agent', agent: 'refund-bot' });

    const usage = await f.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(f.key.runAcme) });
    expect(usage.json().agents).toEqual([
      {
        agent: 'refund-bot',
        running: 1,
        spent: { tokens: 0, minorUnits: 0 },
        reserved: { tokens: 300, minorUnits: 0 },
        ceilings: { maxConcurrentRuns: 1, maxTokensPerPeriod: 900 },
      },
    ]);
    const metrics = (await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) })).body;
    expect(metrics).toContain('quotaplane_plane_running_runs{agent=""} 1');
    expect(metrics).toContain('quotaplane_plane_max_concurrent_runs{agent=""} 5');
    expect(metrics).toContain('quotaplane_plane_running_runs{agent="refund-bot"} 1');
    expect(metrics).toContain('quotaplane_plane_max_concurrent_runs{agent="refund-bot"} 2');
    expect(metrics).toContain('quotaplane_tenant_agent_running_runs{tenant="acme",agent="refund-bot"} 1');
    expect(metrics).toContain('quotaplane_ceiling_refusals_total{code="TooManyRuns",bound="agent"} 1');
  });

  it('without a plane-wide ceiling /metrics has no ceiling gauge value and usage has no agents member', async () => {
    f = await serviceFixture();
    await f.plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 3 }, { newTenant: true });
    await f.plane.admit({ tenant: 'acme', run: 'run-1' });
    const usage = await f.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(f.key.runAcme) });
    expect(Object.keys(usage.json()).sort()).toEqual(['period', 'queue', 'quota', 'reserved', 'running', 'spent', 'tenant']);
    const metrics = (await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) })).body;
    expect(metrics).toContain('quotaplane_plane_running_runs{agent=""} 1');
    expect(metrics).not.toMatch(/^quotaplane_plane_max_concurrent_runs\{/m);
  });
});
