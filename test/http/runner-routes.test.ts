import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Plane } from '../../src/plane/plane.js';
import { bearer, expectProblem, GRANT, serviceFixture, T0, type ServiceFixture } from './http-fixtures.js';

const budget = { maxTokens: 500, maxCallTokens: 100 };

describe('runner routes', () => {
  let f: ServiceFixture;
  beforeEach(async () => {
    f = await serviceFixture();
  });
  afterEach(() => f.close());

  const post = (url: string, payload: unknown, key = f.key.runAcme) => f.app.inject({ method: 'POST', url, payload: payload as object, headers: bearer(key) });

  it('POST /v1/runs admits for the tenant of a runner key, with no tenant in the body', async () => {
    const response = await post('/v1/runs', { run: 'run-1', budget });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toEqual({ ok: true, run: 'run-1', epoch: 1, period: '2026-01', hold: null, leaseExpiresAtMs: T0 + 60_000 });
    expect(await f.store.tenant('acme').runningRuns(10)).toEqual(['run-1']);
  });

  it('an all-tenant operator key on a runner route must name the tenant (400 naming tenant), and may drive the instant', async () => {
    const missing = expectProblem(await post('/v1/runs', { run: 'run-1' }, f.key.opAll), 400, 'INVALID_ARGUMENT');
    expect(missing.field).toBe('tenant');
    const response = await post('/v1/runs', { tenant: 'globex', run: 'run-1', atMs: T0 - 86_400_000 }, f.key.opAll);
    expect(response.json()).toMatchObject({ ok: true, period: '2026-01', leaseExpiresAtMs: T0 - 86_400_000 + 60_000 });
  });

  it('an operator key of one tenant acts on runner routes for that tenant when the body names none', async () => {
    expect((await post('/v1/runs', { run: 'run-1' }, f.key.opAcme)).statusCode).toBe(200);
    expect(await f.store.tenant('acme').runningRuns(10)).toEqual(['run-1']);
  });

  it('TooManyRuns answers 429 with the refusal fields, its message as detail, and Retry-After 1', async () => {
    await f.plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
    await post('/v1/runs', { run: 'run-1' });
    const response = await post('/v1/runs', { run: 'run-2' });
    const problem = expectProblem(response, 429, 'TooManyRuns');
    expect(problem).toMatchObject({ tenant: 'acme', running: 1, limit: 1 });
    expect(problem.detail).toContain("tenant 'acme' has 1 run(s) executing");
    expect(response.headers['retry-after']).toBe('1');
  });

  it('SpentOut on settled spend answers 429 with Retry-After at the end of the period', async () => {
    await f.plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 1000 }, { newTenant: true });
    await post('/v1/runs', { run: 'run-1', budget });
    await post('/v1/runs/run-1/settle', { epoch: 1, spend: { tokens: 950, minorUnits: 0 }, concludes: true });
    const response = await post('/v1/runs', { run: 'run-2', budget });
    expect(expectProblem(response, 429, 'SpentOut')).toMatchObject({
      period: '2026-01-05',
      settled: 950,
      reserved: 0,
      requested: 600,
      limit: 1000,
      retryAtMs: Date.UTC(2026, 0, 6),
    });
    expect(response.headers['retry-after']).toBe(String(16 * 3600));
  });

  it('D13: with spentOutStatus 403, a SpentOut only the period end clears is 403 with retryAtMs and no Retry-After; one held spend may clear stays 429', async () => {
    const strict = await serviceFixture({ spentOutStatus: 403 });
    try {
      const send = (payload: unknown) => strict.app.inject({ method: 'POST', url: '/v1/runs', payload: payload as object, headers: bearer(strict.key.runAcme) });
      await strict.plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 1000 }, { newTenant: true });
      await send({ run: 'run-1', budget });
      // run-1 holds 600 of 1000: run-2 is refused on held spend, which may come back soon.
      const held = await send({ run: 'run-2', budget });
      expect(expectProblem(held, 429, 'SpentOut')).not.toHaveProperty('retryAtMs');
      expect(held.headers['retry-after']).toBe('1');
      await strict.app.inject({ method: 'POST', url: '/v1/runs/run-1/settle', payload: { epoch: 1, spend: { tokens: 950, minorUnits: 0 }, concludes: true }, headers: bearer(strict.key.runAcme) });
      const settled = await send({ run: 'run-3', budget });
      expect(expectProblem(settled, 403, 'SpentOut')).toMatchObject({ settled: 950, retryAtMs: Date.UTC(2026, 0, 6) });
      expect(settled.headers['retry-after']).toBeUndefined();
      // One that never fits stays 422, whatever the setting.
      expectProblem(await send({ run: 'run-4', budget: { maxTokens: 5000, maxCallTokens: 1 } }), 422, 'SpentOut');
    } finally {
      await strict.close();
    }
  });

  it('Unbounded answers 422 and Halted 423, neither with Retry-After', async () => {
    await f.plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1000 }, { newTenant: true });
    const unbounded = await post('/v1/runs', { run: 'run-1', budget: { maxTokens: 10 } });
    expect(expectProblem(unbounded, 422, 'Unbounded')).toMatchObject({ unit: 'tokens', field: 'maxCallTokens' });
    expect(unbounded.headers['retry-after']).toBeUndefined();
    await f.plane.halt({ tenant: 'acme', scope: 'agent:refunder', reason: 'refund loop', by: { actor: 'ops', basis: 'asserted' }, atMs: T0 });
    const halted = await post('/v1/runs', { run: 'run-2', budget, agent: { name: 'refunder', digest: 'a'.repeat(64) } });
    expect(expectProblem(halted, 423, 'Halted')).toMatchObject({
      scope: 'agent:refunder',
      reason: 'refund loop',
      by: { actor: 'ops', basis: 'asserted' },
      haltedAtMs: T0,
    });
    expect(halted.headers['retry-after']).toBeUndefined();
    expect(await f.store.tenant('acme').running()).toBe(0);
  });

  it('settle answers the receipt; an identical retry is already-settled; a different payload is 409 CONFLICT', async () => {
    await post('/v1/runs', { run: 'run-1' });
    const body = { epoch: 1, spend: { tokens: 40, minorUnits: 3 }, concludes: true };
    expect((await post('/v1/runs/run-1/settle', body)).json()).toEqual({
      ok: true,
      outcome: 'settled',
      receipt: { run: 'run-1', epoch: 1, period: '2026-01', spend: { tokens: 40, minorUnits: 3 }, releaseSlot: true, concludes: true },
      overrun: { tokens: 0, minorUnits: 0 },
    });
    expect((await post('/v1/runs/run-1/settle', body)).json()).toMatchObject({ outcome: 'already-settled' });
    expectProblem(await post('/v1/runs/run-1/settle', { ...body, spend: { tokens: 41, minorUnits: 3 } }), 409, 'CONFLICT');
    expect(await f.store.tenant('acme').spent('2026-01')).toEqual({ tokens: 40, minorUnits: 3 });
  });

  it('a retried admission that differs is 409 CONFLICT naming the differing fields as a member; a concluded run says its status', async () => {
    await post('/v1/runs', { run: 'run-1', budget });
    const differs = expectProblem(await post('/v1/runs', { run: 'run-1', budget: { ...budget, maxTokens: 600 }, width: 2 }), 409, 'CONFLICT');
    expect(differs).toMatchObject({ run: 'run-1', fields: ['budget.maxTokens', 'width'] });
    await post('/v1/runs/run-1/settle', { epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: true });
    const closed = expectProblem(await post('/v1/runs', { run: 'run-1', budget }), 409, 'CONFLICT');
    expect(closed).toMatchObject({ run: 'run-1', runStatus: 'concluded' });
    expect(closed.status).toBe(409);
    const stale = expectProblem(await post('/v1/runs/run-1/settle', { epoch: 1, spend: { tokens: 2, minorUnits: 0 }, concludes: true }), 409, 'CONFLICT');
    expect(Object.keys(stale)).not.toContain('tenant');
  });

  it('settling or resuming an unknown run is 404; resuming a concluded run is 409', async () => {
    expectProblem(await post('/v1/runs/run-ghost/settle', { epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true }), 404, 'NOT_FOUND');
    expectProblem(await post('/v1/runs/run-ghost/resume', {}), 404, 'NOT_FOUND');
    await post('/v1/runs', { run: 'run-1' });
    await post('/v1/runs/run-1/settle', { epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
    expectProblem(await post('/v1/runs/run-1/resume', {}), 409, 'CONFLICT');
  });

  it('resume with no body at all opens the next pass', async () => {
    await post('/v1/runs', { run: 'run-1' });
    await post('/v1/runs/run-1/settle', { epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: false });
    const response = await f.app.inject({ method: 'POST', url: '/v1/runs/run-1/resume', headers: bearer(f.key.runAcme) });
    expect(response.json()).toMatchObject({ ok: true, run: 'run-1', epoch: 2 });
  });

  it('a run of another tenant is 404 to a runner key even when the body names no tenant', async () => {
    await post('/v1/runs', { run: 'run-1' });
    expectProblem(await post('/v1/runs/run-1/settle', { epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true }, f.key.runGlobex), 404, 'NOT_FOUND');
    expect(await f.store.tenant('acme').runningRuns(10)).toEqual(['run-1']);
  });

  it('a dispatch body without ceilings is accepted and the quota’s configured ceilings for the grant still apply', async () => {
    await f.plane.setQuota('acme', { period: 'monthly', rateCeilings: { [GRANT]: [{ count: 1, windowSeconds: 3600 }] } }, { newTenant: true });
    await post('/v1/runs', { run: 'run-1' });
    expect((await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-1' })).json()).toEqual({ ok: true });
    expectProblem(await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-2' }), 429, 'RateLimited');
  });

  it('dispatches count against the window: RateLimited 429 with Retry-After until the oldest leaves; UncountableRate 422', async () => {
    await post('/v1/runs', { run: 'run-1' });
    const ceilings = [{ count: 1, windowSeconds: 60 }];
    expect((await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-1', ceilings })).json()).toEqual({ ok: true });
    f.clock.advance(15_000);
    const limited = await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-2', ceilings });
    expect(expectProblem(limited, 429, 'RateLimited')).toMatchObject({ grant: GRANT, reached: 1, retryAtMs: T0 + 60_000, ceiling: { count: 1, windowSeconds: 60 } });
    expect(limited.headers['retry-after']).toBe('45');
    const uncountable = await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-3', ceilings: [{ count: 1, windowSeconds: 0 }] });
    expectProblem(uncountable, 422, 'UncountableRate');
  });

  it('GET /v1/usage answers the figures of the key tenant', async () => {
    await f.plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 5000 }, { newTenant: true });
    await post('/v1/runs', { run: 'run-1', budget });
    const response = await f.app.inject({ method: 'GET', url: '/v1/usage?period=2026-01-05', headers: bearer(f.key.runAcme) });
    expect(response.json()).toEqual({
      tenant: 'acme',
      period: '2026-01-05',
      spent: { tokens: 0, minorUnits: 0 },
      reserved: { tokens: 600, minorUnits: 0 },
      running: 1,
      quota: { period: 'daily', maxTokensPerPeriod: 5000 },
      queue: { depth: 0, oldestWaitMs: null },
    });
  });

  it('a request id a caller sends is echoed (and used in the envelope); an unacceptable one is replaced', async () => {
    const mine = await f.app.inject({ method: 'POST', url: '/v1/runs', payload: { budget: 1 }, headers: { ...bearer(f.key.runAcme), 'x-request-id': 'trace-abc.123' } });
    expect(mine.headers['x-request-id']).toBe('trace-abc.123');
    expect(mine.json<{ requestId: string }>().requestId).toBe('trace-abc.123');
    const bad = await f.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'x'.repeat(300) } });
    expect(bad.headers['x-request-id']).toMatch(/^req_[0-9A-Z]{26}$/);
  });
});

describe('faults', () => {
  it('a store that cannot answer is 503 STORE_UNAVAILABLE with Retry-After, and /readyz says not ready', async () => {
    const f = await serviceFixture();
    await f.store.close();
    const response = await f.app.inject({ method: 'POST', url: '/v1/runs', payload: {}, headers: bearer(f.key.runAcme) });
    expectProblem(response, 503, 'STORE_UNAVAILABLE');
    expect(response.headers['retry-after']).toBe('2');
    const ready = await f.app.inject({ method: 'GET', url: '/readyz' });
    expectProblem(ready, 503, 'STORE_UNAVAILABLE');
    expect(ready.headers['retry-after']).toBe('2');
    expect((await f.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    await f.app.close();
  });

  it('an unexpected error is a 500 with a generic detail, logged with the request id and the cause', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'error' }, { write: (line: string) => lines.push(line) });
    const base = await serviceFixture();
    const broken: Plane = {
      ...base.plane,
      admit: async () => {
        throw new TypeError('undefined is not a function (internal detail 7f3a)');
      },
    };
    await base.app.close();
    const f = await serviceFixture({ plane: broken, store: base.store, keys: base.keys, logger });
    const response = await f.app.inject({ method: 'POST', url: '/v1/runs', payload: {}, headers: bearer(base.key.runAcme) });
    const problem = expectProblem(response, 500, 'INTERNAL');
    expect(response.body).not.toContain('7f3a');
    const logged = lines.map((line) => JSON.parse(line) as { reqId?: string; err?: { message?: string } });
    expect(logged.some((entry) => entry.reqId === problem.requestId && entry.err?.message?.includes('7f3a') === true)).toBe(true);
    await f.close();
    await base.store.close();
  });
});
