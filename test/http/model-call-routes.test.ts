import type { AddressInfo } from 'node:net';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { bearer, expectProblem, serviceFixture, T0, type ServiceFixture } from './http-fixtures.js';

// Model-call ceilings over HTTP (src/http/routes/model-calls.ts, call-ceilings.ts) on SQLite,
// through the service: reservations, their refusals as problems, the end of a call, and ceilings
// edited while the windows keep counting.

const TOKENS_PER_MINUTE = { tenant: [{ unit: 'tokens', limit: 1000, windowSeconds: 60 }] };

describe('model calls over HTTP', () => {
  let f: ServiceFixture;
  beforeEach(async () => {
    f = await serviceFixture();
  });
  afterEach(() => f.close());

  const put = (ceilings: unknown, query = '?newTenant=true') =>
    f.app.inject({ method: 'PUT', url: `/v1/tenants/acme/call-ceilings${query}`, headers: bearer(f.key.opAcme), payload: { ceilings } });
  const reserve = (payload: Record<string, unknown>, key = f.key.runAcme) =>
    f.app.inject({ method: 'POST', url: '/v1/tenants/acme/calls', headers: bearer(key), payload: { model: 'gpt-4o', ...payload } });
  const post = (path: string, payload: unknown = {}, key = f.key.runAcme) =>
    f.app.inject({ method: 'POST', url: `/v1/tenants/acme/calls/${path}`, headers: bearer(key), payload: payload as object });

  it('reserves (201), answers a retry (200), adjusts and releases, and reads the call and the open calls', async () => {
    expect((await put(TOKENS_PER_MINUTE)).json()).toEqual({ ceilings: TOKENS_PER_MINUTE });
    const made = await reserve({ callId: 'c1', inputTokens: 100, maxOutputTokens: 500 });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.json()).toMatchObject({ retried: false, call: { callId: 'c1', status: 'open', reserved: { tokens: 600, requests: 1, minorUnits: 0 }, maxOutputTokens: 500 } });
    const again = await reserve({ callId: 'c1', inputTokens: 100, maxOutputTokens: 500 });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ...made.json<object>(), retried: true });
    expect((await reserve({ callId: 'c2', inputTokens: 10, maxOutputTokens: 10 })).statusCode).toBe(201);
    const open = await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/calls?limit=10', headers: bearer(f.key.runAcme) });
    expect(open.json<{ calls: { callId: string }[] }>().calls.map((call) => call.callId)).toEqual(['c1', 'c2']);

    const adjusted = await post('c1/adjust', { usage: { inputTokens: 100, outputTokens: 50 } });
    expect(adjusted.statusCode, adjusted.body).toBe(200);
    expect(adjusted.json()).toMatchObject({ retried: false, call: { status: 'booked', booked: { tokens: 150, requests: 1 }, estimated: false } });
    expect((await post('c1/adjust', { usage: { inputTokens: 100, outputTokens: 50 } })).json()).toMatchObject({ retried: true });
    const released = await post('c2/release');
    expect(released.json()).toMatchObject({ retried: false, call: { status: 'released', booked: null } });

    const read = await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/calls/c1', headers: bearer(f.key.runAcme) });
    expect(read.json()).toEqual(await f.plane.modelCall({ tenant: 'acme', callId: 'c1' }));
    expect(expectProblem(await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/calls/nope', headers: bearer(f.key.runAcme) }), 404, 'NOT_FOUND').field).toBe('callId');
    expect(expectProblem(await post('nope/adjust', {}), 404, 'NOT_FOUND').field).toBe('callId');
    expect(expectProblem(await post('c1/release'), 409, 'CONFLICT').field).toBe('callId');
    expect((await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/calls', headers: bearer(f.key.runAcme) })).json()).toEqual({ calls: [] });
  });

  it('a full window answers CallLimited 429 with Retry-After and retryAtMs; a call that can never fit answers CallNeverFits 422', async () => {
    await put(TOKENS_PER_MINUTE);
    await reserve({ callId: 'c1', inputTokens: 100, maxOutputTokens: 500 });
    await post('c1/adjust', { usage: { inputTokens: 100, outputTokens: 500 } });
    f.clock.advance(10_000);
    const refused = await reserve({ callId: 'c2', inputTokens: 100, maxOutputTokens: 500 });
    const problem = expectProblem(refused, 429, 'CallLimited');
    expect(problem).toMatchObject({ tenant: 'acme', subject: 'tenant', counted: 600, held: 0, requested: 600, retryAfter: 'window', ceiling: TOKENS_PER_MINUTE.tenant[0] });
    expect(problem.retryAtMs).toBe(T0 + 60_000);
    expect(refused.headers['retry-after']).toBe('50');
    expect(problem.detail).toContain('at most 1000 tokens per 60 seconds');

    const never = await reserve({ callId: 'c3', inputTokens: 2000, maxOutputTokens: 1 });
    expect(expectProblem(never, 422, 'CallNeverFits')).toMatchObject({ subject: 'tenant', requested: 2001 });
    expect(never.headers['retry-after']).toBeUndefined();
    // Nothing of the refused calls was written.
    expect(await f.plane.openCalls({ tenant: 'acme' })).toEqual([]);
  });

  it('20 reservations at once against a ceiling of 5 requests: exactly 5 are admitted, over a listening server', async () => {
    await put({ tenant: [{ unit: 'requests', limit: 5, windowSeconds: 60 }] });
    await f.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = f.app.server.address() as AddressInfo;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        fetch(`http://127.0.0.1:${port}/v1/tenants/acme/calls`, {
          method: 'POST',
          headers: { ...bearer(f.key.runAcme), 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o', callId: `p${index}`, inputTokens: 1, maxOutputTokens: 1 }),
        }).then(async (response) => ({ status: response.status, body: (await response.json()) as { code?: string } })),
      ),
    );
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(5);
    expect(answers.filter((answer) => answer.status === 429 && answer.body.code === 'CallLimited')).toHaveLength(15);
    expect(await f.plane.openCalls({ tenant: 'acme' })).toHaveLength(5);
    const [standing] = await f.plane.callStandings({ tenant: 'acme' });
    expect(standing?.ceilings[0]).toMatchObject({ counted: 0, held: 5, remaining: 0 });
  });

  it('PUT replaces the ceilings and keeps what the windows count; null removes them; both audited as calls.set', async () => {
    await put(TOKENS_PER_MINUTE);
    await reserve({ callId: 'c1', inputTokens: 100, maxOutputTokens: 500 });
    await post('c1/adjust', { usage: { inputTokens: 100, outputTokens: 300 } });
    const wider = { tenant: [{ unit: 'tokens', limit: 5000, windowSeconds: 60 }], models: { 'gpt-4o': [{ unit: 'requests', limit: 10, period: 'daily' }] } };
    expect((await put(wider, '')).json()).toEqual({ ceilings: wider });
    const standings = await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/call-standings', headers: bearer(f.key.runAcme) });
    expect(standings.statusCode, standings.body).toBe(200);
    const body = standings.json<{ standings: { subject: string; ceilings: { counted: number; remaining: number }[] }[] }>();
    expect(body.standings.map((each) => each.subject)).toEqual(['tenant', 'model:gpt-4o']);
    expect(body.standings[0]?.ceilings[0]).toMatchObject({ counted: 400, held: 0, remaining: 4600 });
    expect(body.standings[1]?.ceilings[0]).toMatchObject({ counted: 1, remaining: 9 });
    expect(body).toEqual({ standings: await f.plane.callStandings({ tenant: 'acme' }) });

    expect((await put(null, '')).json()).toEqual({ ceilings: null });
    expect((await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/call-ceilings', headers: bearer(f.key.opAcme) })).json()).toEqual({ ceilings: null });
    const audit = await f.plane.auditLog({ tenant: 'acme', limit: 10, action: 'calls.set' });
    expect(audit.rows.map((row) => row.by)).toEqual([
      { actor: 'ops-acme', basis: 'authenticated' },
      { actor: 'ops-acme', basis: 'authenticated' },
      { actor: 'ops-acme', basis: 'authenticated' },
    ]);
  });

  it('errors name the field; ceilings need an operator key, and a new tenant needs ?newTenant=true', async () => {
    const unknown = await f.app.inject({ method: 'PUT', url: '/v1/tenants/initech/call-ceilings', headers: bearer(f.key.opAll), payload: { ceilings: TOKENS_PER_MINUTE } });
    expect(expectProblem(unknown, 404, 'NOT_FOUND')).toMatchObject({ field: 'tenant' });
    expect(unknown.json<{ detail: string }>().detail).toContain('?newTenant=true');
    expect(expectProblem(await put({ tenant: [{ unit: 'tokens', limit: 1, windowSeconds: 0 }] }), 400, 'INVALID_ARGUMENT').field).toBe('ceilings.tenant[0].windowSeconds');
    expect(expectProblem(await put({ tenant: [{ unit: 'tokens', limit: 1 }] }), 400, 'INVALID_ARGUMENT').field).toBe('ceilings.tenant[0]');
    expect(expectProblem(await put({ tenant: [{ unit: 'tokens', limit: 1, windowSeconds: 5, period: 'daily' }] }), 400, 'INVALID_ARGUMENT').field).toBe('ceilings.tenant[0]');
    expect(expectProblem(await put({ modles: {} }), 400, 'INVALID_ARGUMENT').field).toBe('ceilings.modles');
    expect(expectProblem(await put({ groups: { g: { models: [] } } }), 400, 'INVALID_ARGUMENT').field).toBe('ceilings.groups.g.models');
    expectProblem(await f.app.inject({ method: 'PUT', url: '/v1/tenants/acme/call-ceilings', headers: bearer(f.key.runAcme), payload: { ceilings: null } }), 404, 'NOT_FOUND');
    expectProblem(await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/call-ceilings', headers: bearer(f.key.runAcme) }), 404, 'NOT_FOUND');

    expect(expectProblem(await reserve({ inputTokens: -1 }), 400, 'INVALID_ARGUMENT').field).toBe('inputTokens');
    expect(expectProblem(await reserve({ inputTokens: 1, maxOutputTokens: 0 }), 400, 'INVALID_ARGUMENT').field).toBe('maxOutputTokens');
    expect(expectProblem(await reserve({ inputTokens: 1, atMs: T0 }), 400, 'INVALID_ARGUMENT').field).toBe('atMs');
    expect(expectProblem(await post('c1/adjust', { usage: { inputTokens: 1 } }), 400, 'INVALID_ARGUMENT').field).toBe('usage.outputTokens');
    expect(expectProblem(await f.app.inject({ method: 'GET', url: '/v1/tenants/acme/calls?limit=0', headers: bearer(f.key.runAcme) }), 400, 'INVALID_ARGUMENT').field).toBe('limit');
    // A runner key of another tenant sees nothing.
    expectProblem(await reserve({ inputTokens: 1 }, f.key.runGlobex), 404, 'NOT_FOUND');
    // A minor-unit ceiling needs the call's worst-case cost.
    await put({ tenant: [{ unit: 'minorUnits', limit: 100, period: 'monthly' }] });
    expect(expectProblem(await reserve({ inputTokens: 1 }), 400, 'INVALID_ARGUMENT').field).toBe('maxMinorUnits');
    expect(expectProblem(await reserve({ inputTokens: 1, minorUnitsPerMillionTokens: -1 }), 400, 'INVALID_ARGUMENT').field).toBe('minorUnitsPerMillionTokens');
    expect(expectProblem(await reserve({ inputTokens: 1, minorUnitsPerMillionTokens: 5, maxMinorUnits: 5 }), 400, 'INVALID_ARGUMENT').field).toBe('minorUnitsPerMillionTokens');
    // …or its rate: 1 input token + the default cap of 4096, at 10 000 per million, rounded up.
    const priced = await reserve({ inputTokens: 1, minorUnitsPerMillionTokens: 10_000 });
    expect(priced.statusCode).toBe(201);
    expect(priced.json().call.reserved).toEqual({ tokens: 4097, requests: 1, minorUnits: 41 });
  });
});
