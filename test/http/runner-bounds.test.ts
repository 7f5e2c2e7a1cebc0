import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { MAX_LEASE_MS } from '../../src/store/store-arguments.js';
import { bearer, expectProblem, GRANT, serviceFixture, type ServiceFixture } from './http-fixtures.js';

// Findings from a new user's review of the service: what a runner key may not ask for, leases
// that could hold a slot forever, and a hold that can never fit answered as if waiting helped.
describe('runner bounds over HTTP', () => {
  let f: ServiceFixture;
  beforeEach(async () => {
    f = await serviceFixture();
  });
  afterEach(() => f.close());

  const post = (url: string, payload: unknown, key = f.key.runAcme) => f.app.inject({ method: 'POST', url, payload: payload as object, headers: bearer(key) });

  it('a runner key sending exempt on a dispatch gets 400 naming exempt, and nothing is counted', async () => {
    await f.plane.setQuota('acme', { period: 'monthly', rateCeilings: { [GRANT]: [{ count: 1, windowSeconds: 60 }] } }, { newTenant: true });
    expect((await post('/v1/runs', { run: 'run-1' })).statusCode).toBe(200);
    expect((await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-1', ceilings: [] })).statusCode).toBe(200);
    for (const exempt of [true, false]) {
      const problem = expectProblem(await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-2', ceilings: [], exempt }), 400, 'INVALID_ARGUMENT');
      expect(problem.field).toBe('exempt');
      expect(problem.detail).toMatch(/compensating dispatch needs an operator key, or the library/);
    }
    // The ceiling still binds the runner: the exempt attempts did not slip a dispatch in.
    expectProblem(await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-3', ceilings: [] }), 429, 'RateLimited');
  });

  it('an operator key may send exempt: a compensating dispatch counts past the ceiling', async () => {
    await f.plane.setQuota('acme', { period: 'monthly', rateCeilings: { [GRANT]: [{ count: 1, windowSeconds: 60 }] } }, { newTenant: true });
    await post('/v1/runs', { run: 'run-1' });
    await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-1', ceilings: [] });
    const response = await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'undo', ceilings: [], exempt: true }, f.key.opAcme);
    expect(response.statusCode).toBe(200);
  });

  it('a lease longer than MAX_LEASE_MS is 400 naming leaseMs on admit, resume, heartbeat and dispatch', async () => {
    expect(MAX_LEASE_MS).toBe(86_400_000);
    const tooLong = MAX_LEASE_MS + 1;
    expect(expectProblem(await post('/v1/runs', { run: 'run-1', leaseMs: Number.MAX_SAFE_INTEGER }), 400, 'INVALID_ARGUMENT').field).toBe('leaseMs');
    expect((await post('/v1/runs', { run: 'run-1', leaseMs: MAX_LEASE_MS })).json()).toMatchObject({ ok: true, epoch: 1 });
    expect(expectProblem(await post('/v1/runs/run-1/heartbeat', { epoch: 1, leaseMs: tooLong }), 400, 'INVALID_ARGUMENT').field).toBe('leaseMs');
    expect(
      expectProblem(await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd', ceilings: [], epoch: 1, leaseMs: tooLong }), 400, 'INVALID_ARGUMENT').field,
    ).toBe('leaseMs');
    expect(expectProblem(await post('/v1/runs/run-1/resume', { leaseMs: tooLong }), 400, 'INVALID_ARGUMENT').field).toBe('leaseMs');
  });

  it("under an agent's spend ceiling, Unbounded and a never-fitting SpentOut name the agent (bound 'agent'), not the tenant", async () => {
    await f.plane.setQuota('acme', { period: 'daily', agents: { 'refund-bot': { maxTokensPerPeriod: 500 } } }, { newTenant: true });
    const agent = { name: 'refund-bot', digest: 'a'.repeat(64) };
    const unbounded = expectProblem(await post('/v1/runs', { run: 'run-1', agent }), 422, 'Unbounded');
    expect(unbounded).toMatchObject({ unit: 'tokens', field: 'maxTokens', bound: 'agent', agent: 'refund-bot' });
    expect(unbounded.detail).toMatch(/^tenant 'acme' bounds the tokens per period of agent 'refund-bot'/);
    const tooBig = expectProblem(await post('/v1/runs', { run: 'run-2', agent, budget: { maxTokens: 900, maxCallTokens: 0 } }), 422, 'SpentOut');
    expect(tooBig).toMatchObject({ bound: 'agent', agent: 'refund-bot', limit: 500 });
    expect(tooBig.detail).toMatch(/exceeds the ceiling of agent 'refund-bot' of 500 tokens/);
  });

  it('SpentOut whose hold alone exceeds the ceiling answers 422 without Retry-After', async () => {
    await f.plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 1000 }, { newTenant: true });
    const response = await post('/v1/runs', { run: 'run-1', budget: { maxTokens: 2000, maxCallTokens: 100 } });
    const problem = expectProblem(response, 422, 'SpentOut');
    expect(problem).toMatchObject({ settled: 0, reserved: 0, limit: 1000 });
    expect(problem.requested as number).toBeGreaterThan(1000);
    expect(problem.detail).toMatch(/hold alone exceeds the tenant's ceiling of 1000 tokens.*lower the run's budget or raise the ceiling/);
    expect(response.headers['retry-after']).toBeUndefined();
  });
});
