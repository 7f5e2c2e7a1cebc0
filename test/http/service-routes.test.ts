import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { bearer, GRANT, serviceFixture, type ServiceFixture } from './http-fixtures.js';

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, { security?: unknown; requestBody?: { content: Record<string, { schema: { additionalProperties?: boolean } }> } }>>;
  components: { securitySchemes: Record<string, unknown> };
}

describe('service routes', () => {
  let f: ServiceFixture;
  beforeEach(async () => {
    f = await serviceFixture();
  });
  afterEach(() => f.close());

  it('/healthz and /readyz answer without a key', async () => {
    expect((await f.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await f.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready', backend: 'sqlite' });
  });

  it('an unknown path is a 404 problem, with or without a key', async () => {
    const response = await f.app.inject({ method: 'GET', url: '/v2/everything' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('/openapi.json documents every route from its schemas, with bearer security and closed request bodies', async () => {
    const document = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>();
    expect(document.openapi).toMatch(/^3\./);
    expect(Object.keys(document.paths).sort()).toEqual(
      [
        '/healthz',
        '/metrics',
        '/readyz',
        '/v1/attention',
        '/v1/key',
        '/v1/keys',
        '/v1/keys/{id}/revoke',
        '/v1/keys/{id}/rotate',
        '/v1/events',
        '/v1/plane',
        '/v1/plane/ceiling',
        '/v1/plane/halt',
        '/v1/plane/halt/lift',
        '/v1/plane/refusals',
        '/v1/runs',
        '/v1/runs/{run}/dispatches',
        '/v1/runs/{run}/heartbeat',
        '/v1/runs/{run}/resume',
        '/v1/runs/{run}/settle',
        '/v1/prune',
        '/v1/session',
        '/v1/sweep',
        '/v1/tenants',
        '/v1/tenants/{tenant}/alerts',
        '/v1/tenants/{tenant}/attention',
        '/v1/tenants/{tenant}/audit',
        '/v1/tenants/{tenant}/audit/verify',
        '/v1/tenants/{tenant}/call-ceilings',
        '/v1/tenants/{tenant}/call-standings',
        '/v1/tenants/{tenant}/calls',
        '/v1/tenants/{tenant}/calls/{callId}',
        '/v1/tenants/{tenant}/calls/{callId}/adjust',
        '/v1/tenants/{tenant}/calls/{callId}/release',
        '/v1/tenants/{tenant}/delete',
        '/v1/tenants/{tenant}/events',
        '/v1/tenants/{tenant}/halts',
        '/v1/tenants/{tenant}/halts/lift',
        '/v1/tenants/{tenant}/quota',
        '/v1/tenants/{tenant}/rates',
        '/v1/tenants/{tenant}/reservations',
        '/v1/tenants/{tenant}/runs',
        '/v1/tenants/{tenant}/runs/release-stranded',
        '/v1/tenants/{tenant}/runs/{run}/release',
        '/v1/tenants/{tenant}/runs/{run}/settle',
        '/v1/tenants/{tenant}/slots',
        '/v1/tenants/{tenant}/spend',
        '/v1/tenants/{tenant}/usage',
        '/v1/usage',
        '/v1/webhooks',
        '/v1/webhooks/{id}',
        '/v1/webhooks/{id}/deliveries',
        '/v1/webhooks/{id}/rotate',
        '/v1/webhooks/deliveries/{id}/resend',
      ].sort(),
    );
    expect(document.components.securitySchemes).toHaveProperty('bearer');
    expect(document.paths['/v1/runs']?.post?.security).toEqual([{ bearer: [] }]);
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const operation of Object.values(methods)) {
        const schema = operation.requestBody?.content['application/json']?.schema;
        if (schema !== undefined) expect([path, schema.additionalProperties]).toEqual([path, false]);
      }
    }
  });

  it('/metrics counts admissions, refusals by code, settle and dispatch outcomes and latencies, and reads running and reserved per tenant', async () => {
    await f.plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 10_000 }, { newTenant: true });
    const runner = bearer(f.key.runAcme);
    const budget = { maxTokens: 100, maxCallTokens: 10 };
    await f.app.inject({ method: 'POST', url: '/v1/runs', payload: { run: 'run-1', budget }, headers: runner });
    await f.app.inject({ method: 'POST', url: '/v1/runs', payload: { run: 'run-2', budget }, headers: runner });
    const dispatch = { grant: GRANT, dispatch: 'd-1', ceilings: [{ count: 1, windowSeconds: 60 }] };
    await f.app.inject({ method: 'POST', url: '/v1/runs/run-1/dispatches', payload: dispatch, headers: runner });
    await f.app.inject({ method: 'POST', url: '/v1/runs/run-1/dispatches', payload: { ...dispatch, dispatch: 'd-2' }, headers: runner });
    await f.app.inject({ method: 'POST', url: '/v1/runs/run-9/settle', payload: { epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true }, headers: runner });
    await f.plane.admit({ tenant: 'globex', run: 'run-g' });

    const response = await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    const text = response.body;
    expect(text).toContain('quotaplane_admissions_total{outcome="admitted"} 1');
    expect(text).toContain('quotaplane_admissions_total{outcome="refused"} 1');
    expect(text).toContain('quotaplane_refusals_total{operation="admit",code="TooManyRuns"} 1');
    expect(text).toContain('quotaplane_refusals_total{operation="dispatch",code="RateLimited"} 1');
    expect(text).toContain('quotaplane_dispatches_total{outcome="counted"} 1');
    expect(text).toContain('quotaplane_settles_total{outcome="NOT_FOUND"} 1');
    expect(text).toMatch(/quotaplane_http_request_duration_seconds_count\{method="POST",route="\/v1\/runs",status_code="429"\} 1/);
    expect(text).toMatch(/quotaplane_plane_call_duration_seconds_count\{operation="admit"\} 2/);
    expect(text).toContain('quotaplane_tenant_running_runs{tenant="acme"} 1');
    expect(text).toContain('quotaplane_tenant_running_runs{tenant="globex"} 1');
    expect(text).toContain('quotaplane_tenant_reserved_tokens{tenant="acme"} 110');
    expect(text).toContain('quotaplane_tenant_reserved_minor_units{tenant="acme"} 0');
  });

  it('each app has its own registry: a second app in the same process starts from zero', async () => {
    await f.app.inject({ method: 'POST', url: '/v1/runs', payload: { run: 'run-1' }, headers: bearer(f.key.runAcme) });
    const other = await serviceFixture();
    try {
      const text = (await other.app.inject({ method: 'GET', url: '/metrics', headers: bearer(other.key.opAll) })).body;
      expect(text).not.toContain('quotaplane_admissions_total{outcome="admitted"}');
    } finally {
      await other.close();
    }
  });
});
