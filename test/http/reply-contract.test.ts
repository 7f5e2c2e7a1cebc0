import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { WAITER_LEASE_MS } from '../../src/plane/wait-admission.js';
import { bearer, expectProblem, serviceFixture, type ServiceFixture } from './http-fixtures.js';
import { dereferenced, openApiAjv, type OpenApiDocument } from './openapi-check.js';

// Faults found by checking what the service answers against what /openapi.json and the docs say
// it answers. Each test is named after what a generated client would have got wrong.
describe('replies as documented', () => {
  let f: ServiceFixture;
  beforeEach(async () => {
    f = await serviceFixture();
  });
  afterEach(() => f.close());

  it('POST /v1/sweep reports the waiters it removed (the serializer used to drop `waiters`)', async () => {
    await f.plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
    await f.plane.admit({ tenant: 'acme', run: 'holder' });
    // A waiter whose process is gone: it joined the queue and never looked again.
    await f.store.tenant('acme').admitOrWait(
      { run: 'gone', budget: {}, width: 1, atMs: f.clock.nowMs(), leaseMs: 60_000 },
      { untilMs: f.clock.nowMs() + 60_000, leaseMs: WAITER_LEASE_MS },
    );
    f.clock.advance(WAITER_LEASE_MS);
    const response = await f.app.inject({ method: 'POST', url: '/v1/sweep', headers: bearer(f.key.opAcme), payload: {} });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ atMs: f.clock.nowMs(), swept: [], waiters: [{ tenant: 'acme', expired: 1, recovered: 0, granted: 0 }] });
  });

  it('error replies are documented as application/problem+json, the media type the service sends, with their headers and members', async () => {
    const document = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (!/^[45]/.test(status)) continue;
          expect(Object.keys(response.content ?? {}), `${method} ${path} ${status}`).toEqual(['application/problem+json']);
          expect(Object.keys(response.headers ?? {}), `${method} ${path} ${status}`).toContain('retry-after');
        }
      }
    }
    // A real refusal: its media type and its members are the documented ones.
    await f.plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 0 }, { newTenant: true });
    const refused = await f.app.inject({ method: 'POST', url: '/v1/runs', headers: bearer(f.key.runAcme), payload: { run: 'r1' } });
    const problem = expectProblem(refused, 429, 'TooManyRuns');
    expect(refused.headers['retry-after']).toBe('1');
    const documented = (await dereferenced(document)).paths['/v1/runs']?.post?.responses['4XX']?.content?.['application/problem+json']?.schema;
    const ajv = openApiAjv();
    expect(ajv.validate(documented ?? false, problem), ajv.errorsText(ajv.errors)).toBe(true);
    expect(ajv.validate(documented ?? false, { ...problem, code: 'NoSuchCode' })).toBe(false);
  });

  it('POST /v1/keys is documented with the 201 it answers (the document said 200, so a generated client found no schema for it)', async () => {
    const document = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
    const responses = document.paths['/v1/keys']?.post?.responses ?? {};
    expect(Object.keys(responses).sort()).toEqual(['201', '4XX', '5XX']);
    const created = await f.app.inject({ method: 'POST', url: '/v1/keys', headers: bearer(f.key.opAcme), payload: { tenant: 'acme', role: 'runner', name: 'ci' } });
    expect(created.statusCode, created.body).toBe(201);
    const ajv = openApiAjv();
    const body = created.json<Record<string, unknown>>();
    expect(ajv.validate(responses['201']?.content?.['application/json']?.schema ?? false, body), ajv.errorsText(ajv.errors)).toBe(true);
    // The secret, shown once, is still in the answer now that a schema serializes it.
    expect(body).toMatchObject({ tenant: 'acme', role: 'runner', name: 'ci', revokedAtMs: null, key: expect.stringMatching(/^qp_/) });
  });

  it('GET /metrics documents its 200, Prometheus text (the document listed only its errors)', async () => {
    const document = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
    const ok = document.paths['/metrics']?.get?.responses['200'];
    expect(Object.keys(ok?.content ?? {})).toEqual(['text/plain']);
    const metrics = await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) });
    expect(metrics.statusCode).toBe(200);
    expect(metrics.headers['content-type']).toMatch(/^text\/plain/);
    // Still the text itself: a string reply under text/plain is never run through a serializer.
    expect(metrics.body).toMatch(/^# HELP /);
  });

  it.each([
    ['/v1/tenants/{tenant}/quota', '/v1/tenants/acme/quota', { maxConcurrentRuns: 2 }],
    ['/v1/plane/ceiling', '/v1/plane/ceiling', { maxConcurrentRuns: 2 }],
  ])('PATCH %s documents application/merge-patch+json, which it accepts, and still checks a body sent in it', async (path, url, patch) => {
    const document = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
    const content = document.paths[path]?.patch?.requestBody?.content ?? {};
    expect(Object.keys(content).sort()).toEqual(['application/json', 'application/merge-patch+json']);
    expect(content['application/merge-patch+json']).toEqual(content['application/json']);
    const headers = { ...bearer(f.key.opAll), 'content-type': 'application/merge-patch+json' };
    const patched = await f.app.inject({ method: 'PATCH', url, headers, payload: JSON.stringify(patch) });
    expect(patched.statusCode, patched.body).toBe(200);
    const refused = await f.app.inject({ method: 'PATCH', url, headers, payload: JSON.stringify({ ...patch, maxConcurentRuns: 1 }) });
    expect(expectProblem(refused, 400, 'INVALID_ARGUMENT').field).toBe('maxConcurentRuns');
  });

  it('a quota that two PATCHes grew past what one request may configure still reads back (every read of it answered 500)', async () => {
    const headers = { ...bearer(f.key.opAcme), 'content-type': 'application/merge-patch+json' };
    const grants = (from: number) => Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`tool://g${from + i}`, [{ count: 1, windowSeconds: 60 }]]));
    for (const from of [0, 200]) {
      const patched = await f.app.inject({ method: 'PATCH', url: '/v1/tenants/acme/quota', headers, payload: JSON.stringify({ rateCeilings: grants(from) }) });
      // The second PATCH committed, and its own answer was a 500 saying nothing was known to have changed.
      expect(patched.statusCode, patched.body.slice(0, 200)).toBe(200);
    }
    const quota = await f.plane.getQuota('acme');
    expect(Object.keys(quota?.rateCeilings ?? {})).toHaveLength(400);
    for (const [url, key] of [['/v1/tenants/acme/quota', f.key.opAcme], ['/v1/tenants/acme/usage', f.key.opAcme], ['/v1/usage', f.key.runAcme], ['/v1/tenants/acme/spend', f.key.opAcme]] as const) {
      const response = await f.app.inject({ method: 'GET', url, headers: bearer(key) });
      expect(response.statusCode, `${url}: ${response.body.slice(0, 200)}`).toBe(200);
      expect(response.json<{ quota: unknown }>().quota).toEqual(quota);
    }
  });

  it('a plane-wide ceiling that two PATCHes grew past one request still reads back (GET /v1/plane answered 500)', async () => {
    const headers = { ...bearer(f.key.opAll), 'content-type': 'application/merge-patch+json' };
    const agents = (from: number) => Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`agent-${from + i}`, { maxConcurrentRuns: 1 }]));
    for (const from of [0, 600]) {
      const patched = await f.app.inject({ method: 'PATCH', url: '/v1/plane/ceiling', headers, payload: JSON.stringify({ agents: agents(from) }) });
      expect(patched.statusCode, patched.body.slice(0, 200)).toBe(200);
    }
    const status = await f.app.inject({ method: 'GET', url: '/v1/plane', headers: bearer(f.key.opAll) });
    expect(status.statusCode, status.body.slice(0, 200)).toBe(200);
    expect(status.json()).toEqual(await f.plane.planeStatus());
  });
});
