import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { unknownTenantError } from '../../src/core/known-tenant.js';
import { DEFAULT_RETRY_AFTER, errorProblem } from '../../src/http/errors.js';
import { bearer, expectProblem, serviceFixture, stateSnapshot, type ServiceFixture } from './http-fixtures.js';

// Over HTTP, a write naming a tenant that does not exist (rules.md#l95) answers 404 naming it and
// the nearest known tenant, and changes nothing, unless the request says ?newTenant=true. The
// fixture's tenants are acme and globex (their keys make them exist).

describe('tenants that do not exist, over HTTP', () => {
  let f: ServiceFixture;
  beforeEach(async () => {
    f = await serviceFixture();
  });
  afterEach(() => f.close());

  const send = (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: object) =>
    f.app.inject({ method, url, payload, headers: bearer(f.key.opAll) });

  it("L95.1 a halt, a lift, a quota set or change, a key or a release naming 'acmee' answers 404 suggesting 'acme', and changes nothing", async () => {
    const before = await stateSnapshot(f);
    const acts = [
      ['halt', () => send('POST', '/v1/tenants/acmee/halts', { scope: 'tenant', reason: 'incident 42' })],
      ['halt', () => send('POST', '/v1/tenants/acmee/halts', { scope: 'subject:alice', reason: 'leaked token' })],
      ['lift', () => send('POST', '/v1/tenants/acmee/halts/lift', { scope: 'tenant' })],
      ['quota', () => send('PUT', '/v1/tenants/acmee/quota', { maxConcurrentRuns: 0 })],
      ['quota', () => send('PATCH', '/v1/tenants/acmee/quota', { maxConcurrentRuns: 0 })],
      ['key', () => send('POST', '/v1/keys', { tenant: 'acmee', role: 'runner' })],
      ['release', () => send('POST', '/v1/tenants/acmee/runs/run-1/release', {})],
    ] as const;
    for (const [act, call] of acts) {
      const problem = expectProblem(await call(), 404, 'NOT_FOUND');
      expect(problem, act).toMatchObject({ field: 'tenant', tenant: 'acmee', act, suggestion: 'acme' });
      expect(problem.detail, act).toContain("tenant 'acmee' does not exist: it has no quota and no history");
      expect(problem.detail, act).toContain("did you mean 'acme'?");
      if (act === 'lift' || act === 'release') expect(problem.detail, act).not.toContain('newTenant');
      else expect(problem.detail, act).toContain("repeat the request with ?newTenant=true to create 'acmee'");
    }
    expect(await stateSnapshot(f)).toEqual(before);
    const listed = await f.app.inject({ method: 'GET', url: '/v1/tenants', headers: bearer(f.key.opAll) });
    expect(listed.json()).toEqual({ tenants: ['acme', 'globex'] });
    const metrics = (await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) })).body;
    expect(metrics).not.toContain('acmee');
  });

  it('L95.2 with ?newTenant=true a halt, a quota set or change and a key create their tenant, listed from then on', async () => {
    expect((await send('POST', '/v1/tenants/initech/halts?newTenant=true', { scope: 'tenant', reason: 'onboarding' })).statusCode).toBe(200);
    expect((await send('PUT', '/v1/tenants/umbrella/quota?newTenant=true', { maxConcurrentRuns: 2 })).statusCode).toBe(200);
    expect((await send('PATCH', '/v1/tenants/hooli/quota?newTenant=true', { maxConcurrentRuns: 3 })).statusCode).toBe(200);
    expect((await send('POST', '/v1/keys?newTenant=true', { tenant: 'pied-piper', role: 'runner' })).statusCode).toBe(201);
    const listed = await f.app.inject({ method: 'GET', url: '/v1/tenants', headers: bearer(f.key.opAll) });
    expect(listed.json()).toEqual({ tenants: ['acme', 'globex', 'hooli', 'initech', 'pied-piper', 'umbrella'] });
    const metrics = (await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) })).body;
    expect(metrics).toContain('tenant="initech"');
    // ?newTenant=false is as good as absent, and anything but a boolean is a 400 naming it.
    expectProblem(await send('POST', '/v1/tenants/acmee/halts?newTenant=false', { scope: 'tenant', reason: 'x' }), 404, 'NOT_FOUND');
    expect(expectProblem(await send('POST', '/v1/tenants/acmee/halts?newTenant=yes', { scope: 'tenant', reason: 'x' }), 400, 'INVALID_ARGUMENT').field).toBe('newTenant');
  });

  it('L95.3 the 404 suggests only a tenant the key covers', () => {
    const error = unknownTenantError('acmee', ['acme', 'globex'], 'halt');
    const context = { requestId: 'req_1', retryAfter: DEFAULT_RETRY_AFTER, logInternal: () => undefined };
    const everyTenant = errorProblem(error, { ...context, covers: () => true }).problem;
    expect(everyTenant).toMatchObject({ status: 404, code: 'NOT_FOUND', tenant: 'acmee', act: 'halt', suggestion: 'acme' });
    const globexOnly = errorProblem(error, { ...context, covers: (tenant) => tenant === 'globex' }).problem;
    expect(globexOnly).toMatchObject({ status: 404, code: 'NOT_FOUND', field: 'tenant', tenant: 'acmee', act: 'halt' });
    expect(globexOnly).not.toHaveProperty('suggestion');
    expect(globexOnly.detail).not.toContain('acme\'');
    expect(globexOnly.detail).toContain('no known tenant has a name near it');
    expect(errorProblem(error, context).problem).not.toHaveProperty('suggestion');
  });
});
