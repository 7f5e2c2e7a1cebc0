import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { RouteModule } from '../../src/http/route-context.js';
import { ROUTES } from '../../src/http/routes/index.js';
import { createDispatcher } from '../../src/plane/webhook-dispatcher.js';
import { bearer, GRANT, serviceFixture, type FixtureKey, type ServiceFixture } from './http-fixtures.js';
import { dereferenced, openApiAjv, type OpenApiDocument, type OpenApiResponse } from './openapi-check.js';

/*
 * The contract a generated client relies on, checked against real answers: every route is driven
 * through app.inject (its success and the errors it documents), and each answer must have a
 * documented status, a documented media type, a body the documented schema accepts, and exactly
 * the value the handler produced. The last catches what fast-json-stringify does silently: a member
 * the reply schema does not list is dropped, and a value of another type is coerced.
 */

/** One answer as the walk saw it, with the operation it belongs to. */
interface Seen {
  readonly label: string;
  readonly operation: string;
  readonly status: number;
}

describe('every route answers what /openapi.json documents', () => {
  let f: ServiceFixture;
  let document: OpenApiDocument;
  const seen: Seen[] = [];
  const faults: string[] = [];
  // What each handler produced before serialization, by request id.
  const produced = new Map<string, unknown>();
  const capture: RouteModule = (app) => {
    app.addHook('preSerialization', async (request, _reply, payload) => {
      produced.set(request.id, JSON.parse(JSON.stringify(payload)));
      return payload;
    });
  };
  const ajv = openApiAjv();

  // The documented operation a request reaches: the path template that matches its path.
  const operationOf = (method: string, url: string): string | null => {
    const path = url.split('?')[0] ?? url;
    for (const template of Object.keys(document.paths)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (pattern.test(path) && document.paths[template]?.[method.toLowerCase()] !== undefined) return `${method.toUpperCase()} ${template}`;
    }
    return null;
  };

  // Checks one answer against the document and the handler's own value; records what is wrong.
  const check = (label: string, method: string, url: string, response: LightMyRequestResponse): void => {
    const operation = operationOf(method, url);
    const fault = (what: string): void => {
      faults.push(`${label} (${method} ${url} → ${response.statusCode}): ${what}`);
    };
    if (operation === null) return fault('no documented operation');
    seen.push({ label, operation, status: response.statusCode });
    const [verb, template] = operation.split(' ') as [string, string];
    const responses = document.paths[template]?.[verb.toLowerCase()]?.responses ?? {};
    const status = String(response.statusCode);
    const documented: OpenApiResponse | undefined = responses[status] ?? responses[`${status[0]}XX`];
    if (documented === undefined) return fault(`status ${status} is not documented (documented: ${Object.keys(responses).join(', ')})`);
    const mediaType = String(response.headers['content-type'] ?? '').split(';')[0] ?? '';
    const content = documented.content?.[mediaType];
    if (content === undefined) return fault(`media type ${mediaType} is not documented (documented: ${Object.keys(documented.content ?? {}).join(', ')})`);
    if (content.schema === undefined) return fault('no schema');
    const body: unknown = mediaType.endsWith('json') ? response.json() : response.body;
    if (!ajv.validate(content.schema, body)) fault(`the documented schema refuses the body: ${ajv.errorsText(ajv.errors)}`);
    const requestId = String(response.headers['x-request-id']);
    if (produced.has(requestId)) {
      const before = JSON.stringify(produced.get(requestId));
      const after = JSON.stringify(body);
      if (before !== after) fault(`the serializer changed the handler's value:\n  produced ${before}\n  sent     ${after}`);
    }
  };

  const call = async (
    label: string,
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    key: FixtureKey | null,
    payload?: unknown,
    headers: Record<string, string> = {},
    app = f.app,
  ): Promise<LightMyRequestResponse> => {
    const response = await app.inject({
      method,
      url,
      headers: { ...(key === null ? {} : bearer(key)), ...headers },
      ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : (payload as object) }),
    });
    check(label, method, url, response);
    return response;
  };

  beforeAll(async () => {
    f = await serviceFixture({ routes: [capture, ...ROUTES] });
    document = await dereferenced((await f.app.inject({ method: 'GET', url: '/openapi.json' })).json<OpenApiDocument>());
  });
  afterAll(() => f.close());

  it('drives every operation, its success and the errors it documents, and every answer matches', async () => {
    const k = f.key;
    const digest = 'ab'.repeat(32);
    const agent = { name: 'planner', digest };
    const mergePatch = { 'content-type': 'application/merge-patch+json' };
    // Service routes.
    await call('health', 'GET', '/healthz', null);
    await call('ready', 'GET', '/readyz', null);
    await call('metrics', 'GET', '/metrics', k.opAll);
    // The quota, with every kind of ceiling, so the replies carry every member.
    await call('quota set', 'PUT', '/v1/tenants/acme/quota', k.opAcme, {
      maxConcurrentRuns: 3,
      maxTokensPerPeriod: 1_000_000,
      rateCeilings: { [GRANT]: [{ count: 2, windowSeconds: 60 }] },
      agents: { planner: { maxConcurrentRuns: 2, maxTokensPerPeriod: 500_000 } },
    });
    await call('quota patch', 'PATCH', '/v1/tenants/acme/quota', k.opAcme, JSON.stringify({ maxMinorUnitsPerPeriod: null }), mergePatch);
    await call('quota read', 'GET', '/v1/tenants/acme/quota', k.opAcme);
    await call('quota none', 'GET', '/v1/tenants/globex/quota', k.opGlobex);
    // The run lifecycle, and its refusals.
    await call('admit', 'POST', '/v1/runs', k.runAcme, { run: 'r1', agent, chain: ['alice', 'bot'], budget: { maxTokens: 1000, maxCallTokens: 100 } });
    await call('admit another', 'POST', '/v1/runs', k.runAcme, { run: 'r2', budget: { maxTokens: 1000, maxCallTokens: 100 } });
    await call('admit Unbounded 422', 'POST', '/v1/runs', k.runAcme, { run: 'r9' });
    await call('admit a retry with other fields 409', 'POST', '/v1/runs', k.runAcme, { run: 'r1', budget: { maxTokens: 5, maxCallTokens: 1 } });
    await call('dispatch with epoch', 'POST', '/v1/runs/r1/dispatches', k.runAcme, { grant: GRANT, dispatch: 'd1', epoch: 1 });
    await call('dispatch', 'POST', '/v1/runs/r1/dispatches', k.runAcme, { grant: GRANT, dispatch: 'd2' });
    await call('dispatch RateLimited 429', 'POST', '/v1/runs/r1/dispatches', k.runAcme, { grant: GRANT, dispatch: 'd3' });
    await call('dispatch UncountableRate 422', 'POST', '/v1/runs/r1/dispatches', k.runAcme, { grant: 'tool://x', dispatch: 'd4', ceilings: [{ count: 1, windowSeconds: 0 }] });
    await call('heartbeat', 'POST', '/v1/runs/r1/heartbeat', k.runAcme, { epoch: 1 });
    await call('heartbeat of a pass never opened 404', 'POST', '/v1/runs/r1/heartbeat', k.runAcme, { epoch: 7 });
    await call('settle over the hold', 'POST', '/v1/runs/r1/settle', k.runAcme, { epoch: 1, spend: { tokens: 1200, minorUnits: 0 }, concludes: false });
    await call('settle retried', 'POST', '/v1/runs/r1/settle', k.runAcme, { epoch: 1, spend: { tokens: 1200, minorUnits: 0 }, concludes: false });
    await call('settle conflicting 409', 'POST', '/v1/runs/r1/settle', k.runAcme, { epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: false });
    await call('resume', 'POST', '/v1/runs/r1/resume', k.runAcme, {});
    await call('usage', 'GET', '/v1/usage', k.runAcme);
    await call('usage of a period', 'GET', '/v1/tenants/acme/usage?period=2026-01-05', k.opAcme);
    // Halts: a subject halt withholds r1; a tenant halt refuses globex's admissions.
    await call('halt subject', 'POST', '/v1/tenants/acme/halts', k.opAcme, { scope: 'subject:alice', reason: 'audit' });
    await call('heartbeat Withheld 423', 'POST', '/v1/runs/r1/heartbeat', k.runAcme, { epoch: 2 });
    await call('halts standing', 'GET', '/v1/tenants/acme/halts', k.opAcme);
    await call('attention while withheld', 'GET', '/v1/tenants/acme/attention', k.opAcme);
    await call('lift', 'POST', '/v1/tenants/acme/halts/lift', k.opAcme, { scope: 'subject:alice' });
    await call('halts lifted', 'GET', '/v1/tenants/acme/halts?state=lifted&limit=5', k.opAcme);
    await call('halt tenant', 'POST', '/v1/tenants/globex/halts', k.opGlobex, { scope: 'tenant', reason: 'stop' });
    await call('admit Halted 423', 'POST', '/v1/runs', k.runGlobex, { run: 'g1' });
    // Listings.
    await call('runs', 'GET', '/v1/tenants/acme/runs?status=running,withheld&limit=1', k.opAcme);
    await call('slots', 'GET', '/v1/tenants/acme/slots', k.opAcme);
    await call('reservations', 'GET', '/v1/tenants/acme/reservations?limit=1', k.opAcme);
    await call('rates', 'GET', '/v1/tenants/acme/rates', k.opAcme);
    await call('spend', 'GET', '/v1/tenants/acme/spend?periods=2', k.opAcme);
    // A waiter whose process is gone, in a tenant with one slot, for the sweep to remove.
    await f.plane.setQuota('initech', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
    await f.plane.admit({ tenant: 'initech', run: 'holder', leaseMs: 86_400_000 });
    await f.store.tenant('initech').admitOrWait(
      { run: 'gone', budget: {}, width: 1, atMs: f.clock.nowMs(), leaseMs: 60_000 },
      { untilMs: f.clock.nowMs() + 2 * 60 * 60_000, leaseMs: 1_000 },
    );
    // Leases lapse: the sweep strands the runs and removes the waiter, and attention names the runs.
    f.clock.advance(60 * 60_000);
    const swept = await call('sweep', 'POST', '/v1/sweep', k.opAll, {});
    const attention = await call('attention', 'GET', '/v1/tenants/acme/attention?holdStaleAfterMs=1', k.opAcme);
    await call('attention of every tenant', 'GET', '/v1/attention?limit=1', k.opAll);
    await call('operator settle', 'POST', '/v1/tenants/acme/runs/r2/settle', k.opAcme, { epoch: 1, spend: { tokens: 10, minorUnits: 0 }, concludes: false });
    await call('operator release', 'POST', '/v1/tenants/acme/runs/r1/release', k.opAcme, {});
    await call('operator release again', 'POST', '/v1/tenants/acme/runs/r1/release', k.opAcme, {});
    await call('release stranded', 'POST', '/v1/tenants/acme/runs/release-stranded', k.opAcme, { runs: ['r1'] });
    await call('audit', 'GET', '/v1/tenants/acme/audit', k.opAcme);
    await call('audit of one action', 'GET', '/v1/tenants/acme/audit?action=halt&limit=1', k.opAcme);
    await call('audit verify', 'GET', '/v1/tenants/acme/audit/verify', k.opAcme);
    await call('events', 'GET', '/v1/events?after=0&limit=5', k.opAll);
    await call('events past the end', 'GET', '/v1/events?after=999999', k.opAll);
    await call('tenant events', 'GET', '/v1/tenants/acme/events', k.opAcme);
    await call('alerts', 'GET', '/v1/tenants/acme/alerts', k.opAcme);
    await call('tenants', 'GET', '/v1/tenants', k.opAll);
    // A tenant deleted: refused while its runs still hold slots, then deleted once released.
    await call('delete a tenant with a running run 409', 'POST', '/v1/tenants/initech/delete', k.opAll, { reason: 'left' });
    await call('release initech holder', 'POST', '/v1/tenants/initech/runs/holder/release', k.opAll, {});
    await call('delete a tenant', 'POST', '/v1/tenants/initech/delete', k.opAll, { reason: 'left' });
    await call('prune', 'POST', '/v1/prune', k.opAcme, { olderThanMs: 1, dryRun: true });
    // Keys.
    await call('key', 'GET', '/v1/key', k.runAcme);
    const created = await call('key create', 'POST', '/v1/keys', k.opAcme, { tenant: 'acme', role: 'runner', name: 'ci' });
    await call('keys', 'GET', '/v1/keys', k.opAcme);
    await call('key revoke', 'POST', `/v1/keys/${created.json<{ id: string }>().id}/revoke`, k.opAcme);
    await call('key revoke unknown 404', 'POST', '/v1/keys/key_nope/revoke', k.opAcme);
    const rotating = await call('key create to rotate', 'POST', '/v1/keys', k.opAcme, { tenant: 'acme', role: 'runner', name: 'ci2', expiresInMs: 3_600_000 });
    await call('key rotate', 'POST', `/v1/keys/${rotating.json<{ id: string }>().id}/rotate`, k.opAcme, { overlapMs: 60_000 });
    await call('key rotate unknown 404', 'POST', '/v1/keys/key_nope/rotate', k.opAcme, { overlapMs: 0 });
    await call('session start', 'POST', '/v1/session', k.opAcme);
    await call('session end without a cookie', 'DELETE', '/v1/session', k.opAcme);
    // The plane-wide ceiling.
    await call('plane none', 'GET', '/v1/plane', k.opAll);
    await call('plane set', 'PUT', '/v1/plane/ceiling', k.opAll, { maxConcurrentRuns: 10, agents: { planner: { maxConcurrentRuns: 1 } }, weights: { acme: 2 } });
    await call('plane patch', 'PATCH', '/v1/plane/ceiling', k.opAll, JSON.stringify({ weights: { acme: null } }), mergePatch);
    await call('plane', 'GET', '/v1/plane', k.opAll);
    await call('plane halt', 'POST', '/v1/plane/halt', k.opAll, { reason: 'provider outage', reachesRunning: false });
    await call('plane halt lift', 'POST', '/v1/plane/halt/lift', k.opAll, {});
    await call('plane refusals', 'GET', '/v1/plane/refusals', k.opAll);
    // Back-pressure: the plane-wide ceiling for planner is 1.
    await call('admit planner', 'POST', '/v1/runs', k.runAcme, { run: 'r3', agent, budget: { maxTokens: 1, maxCallTokens: 1 } });
    await call('admit TooManyRuns 429', 'POST', '/v1/runs', k.runAcme, { run: 'r4', agent, budget: { maxTokens: 1, maxCallTokens: 1 } });
    await call('admit SpentOut that never fits 422', 'POST', '/v1/runs', k.runAcme, { run: 'r5', budget: { maxTokens: 10_000_000, maxCallTokens: 1 } });
    // Model-call ceilings and calls (docs/design/rules.md#m1–#m10), on a tenant of their own.
    const tokens = { unit: 'tokens', limit: 1000, windowSeconds: 60 };
    await call('call ceilings of an unknown tenant 404', 'PUT', '/v1/tenants/metered/call-ceilings', k.opAll, { ceilings: { tenant: [tokens] } });
    await call('call ceilings set', 'PUT', '/v1/tenants/metered/call-ceilings?newTenant=true', k.opAll, {
      ceilings: {
        tenant: [tokens],
        agents: { planner: [{ unit: 'requests', limit: 100, period: 'daily' }] },
        models: { 'gpt-4o': [{ unit: 'tokens', limit: 5000, period: 'monthly' }] },
        groups: { openai: { models: ['gpt-4o', 'gpt-4.1'], ceilings: [{ unit: 'requests', limit: 50, windowSeconds: 3600 }] } },
        endUsers: { default: [{ unit: 'requests', limit: 10, windowSeconds: 60 }], overrides: { vip: [] } },
        defaultMaxOutputTokens: 256,
        leaseMs: 60_000,
      },
    });
    await call('call ceilings read', 'GET', '/v1/tenants/metered/call-ceilings', k.opAll);
    await call('call ceilings bad member 400', 'PUT', '/v1/tenants/metered/call-ceilings', k.opAll, { ceilings: { tenant: [{ unit: 'tokens', limit: 1 }] } });
    await call('call reserve', 'POST', '/v1/tenants/metered/calls', k.opAll, { model: 'gpt-4o', agent: 'planner', endUser: 'u1', callId: 'mc1', inputTokens: 100, maxOutputTokens: 500 });
    await call('call reserve retried', 'POST', '/v1/tenants/metered/calls', k.opAll, { model: 'gpt-4o', agent: 'planner', endUser: 'u1', callId: 'mc1', inputTokens: 100, maxOutputTokens: 500 });
    await call('call reserve CallLimited 429', 'POST', '/v1/tenants/metered/calls', k.opAll, { model: 'gpt-4o', callId: 'mc2', inputTokens: 300, maxOutputTokens: 200 });
    await call('call reserve CallNeverFits 422', 'POST', '/v1/tenants/metered/calls', k.opAll, { model: 'gpt-4o', callId: 'mc3', inputTokens: 5000 });
    await call('calls open', 'GET', '/v1/tenants/metered/calls?limit=5', k.opAll);
    await call('call read', 'GET', '/v1/tenants/metered/calls/mc1', k.opAll);
    await call('call read unknown 404', 'GET', '/v1/tenants/metered/calls/nope', k.opAll);
    await call('call standings', 'GET', '/v1/tenants/metered/call-standings?limit=10', k.opAll);
    await call('call adjust', 'POST', '/v1/tenants/metered/calls/mc1/adjust', k.opAll, { usage: { inputTokens: 100, outputTokens: 20, minorUnits: 3 } });
    await call('call release of a booked call 409', 'POST', '/v1/tenants/metered/calls/mc1/release', k.opAll, {});
    await call('call reserve to release', 'POST', '/v1/tenants/metered/calls', k.opAll, { model: 'o3', callId: 'mc4', inputTokens: 10 });
    await call('call release', 'POST', '/v1/tenants/metered/calls/mc4/release', k.opAll, {});
    await call('call ceilings removed', 'PUT', '/v1/tenants/metered/call-ceilings', k.opAll, { ceilings: null });
    // Webhooks (docs/design/rules.md#h1–#h12), on a tenant of their own; a stub sends the delivery.
    await call('webhook add of an unknown tenant 404', 'POST', '/v1/webhooks', k.opAll, { tenant: 'hooked', url: 'http://127.0.0.1:9/hook' });
    await f.plane.setQuota('hooked', { maxConcurrentRuns: 5 }, { by: { actor: 'ops', basis: 'asserted' }, newTenant: true });
    const hook = await call('webhook add', 'POST', '/v1/webhooks', k.opAll, { tenant: 'hooked', url: 'http://127.0.0.1:9/hook', eventTypes: ['halt.set'] });
    const hookId = hook.json<{ endpoint: { id: string } }>().endpoint.id;
    await call('webhooks', 'GET', '/v1/webhooks?tenant=hooked', k.opAll);
    await call('webhook rotate', 'POST', `/v1/webhooks/${hookId}/rotate`, k.opAll, { overlapMs: 60_000 });
    await call('webhook rotate unknown 404', 'POST', '/v1/webhooks/wh_00000000000000000000000000/rotate', k.opAll, {});
    await f.plane.halt({ tenant: 'hooked', scope: 'tenant', reason: 'webhook walk', by: { actor: 'ops', basis: 'asserted' }, newTenant: true });
    await createDispatcher({ store: f.store, clock: f.clock, send: async () => ({ status: 204 }) }).round();
    const deliveries = await call('webhook deliveries', 'GET', `/v1/webhooks/${hookId}/deliveries?status=delivered`, k.opAll);
    const deliveryId = deliveries.json<{ deliveries: { id: string }[] }>().deliveries[0]?.id ?? 'none';
    await call('webhook resend', 'POST', `/v1/webhooks/deliveries/${deliveryId}/resend`, k.opAll);
    await call('webhook resend while pending 409', 'POST', `/v1/webhooks/deliveries/${deliveryId}/resend`, k.opAll);
    await call('webhook remove', 'DELETE', `/v1/webhooks/${hookId}`, k.opAll);
    // Faults of the request, on protected routes.
    await call('no key 401', 'GET', '/v1/usage', null);
    await call('revoked key 401', 'GET', '/v1/usage', k.revoked);
    await call('uncovered tenant 404', 'GET', '/v1/tenants/globex/quota', k.opAcme);
    await call('runner key on an operator route 404', 'GET', '/v1/tenants/acme/quota', k.runAcme);
    await call('unknown member 400', 'POST', '/v1/runs', k.runAcme, { bogus: 1 });
    await call('bad query 400', 'GET', '/v1/tenants/acme/runs?limit=0', k.opAcme);
    await call('bad JSON 400', 'POST', '/v1/runs', k.runAcme, '{', { 'content-type': 'application/json' });
    await call('not JSON 415', 'POST', '/v1/runs', k.runAcme, 'text', { 'content-type': 'text/plain' });
    await call('too large 413', 'POST', '/v1/runs', k.runAcme, JSON.stringify({ run: 'x'.repeat(70_000) }), { 'content-type': 'application/json' });
    await call('settle of no such run 404', 'POST', '/v1/runs/nobody/settle', k.runAcme, { epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
    // A store that is not ready: 503.
    const starting = await serviceFixture({ readiness: () => 'the store is opening' });
    try {
      await call('not ready 503', 'GET', '/readyz', null, undefined, {}, starting.app);
    } finally {
      await starting.close();
    }

    expect(faults).toEqual([]);
    // The walk reached the members that are there only sometimes.
    expect(swept.json()).toHaveProperty('waiters');
    expect(attention.json<{ conditions: { kind: string }[] }>().conditions.map((each) => each.kind)).toContain('run.stranded');
    // Every documented operation was driven to its success at least once.
    const succeeded = new Set(seen.filter((each) => each.status < 300).map((each) => each.operation));
    const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`));
    expect(operations.filter((operation) => !succeeded.has(operation))).toEqual([]);
    // And the errors seen cover every status the docs' table of errors lists.
    expect([...new Set(seen.map((each) => each.status))].sort()).toEqual([200, 201, 400, 401, 404, 409, 413, 415, 422, 423, 429, 503]);
  });

  it('documents a schema for every status of every operation', () => {
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          const schemas = Object.values(response.content ?? {}).filter((media) => media.schema !== undefined);
          if (schemas.length === 0) missing.push(`${method.toUpperCase()} ${path} ${status}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('compares what matters: a reply schema too narrow drops a member and truncates a number, silently', async () => {
    // The check itself, against a route registered with too narrow a reply schema.
    const narrow: RouteModule = (app) => {
      app.get('/narrow', { schema: { response: { 200: { type: 'object', properties: { kept: { type: 'integer' } } } } } }, async () => ({ kept: 1.5, swept: true }));
    };
    const fixture = await serviceFixture({ routes: [capture, narrow] });
    try {
      const response = await fixture.app.inject({ method: 'GET', url: '/narrow' });
      expect(produced.get(String(response.headers['x-request-id']))).toEqual({ kept: 1.5, swept: true });
      // Dropped and truncated, without a word: exactly what the walk compares.
      expect(response.json()).toEqual({ kept: 1 });
    } finally {
      await fixture.close();
    }
  });
});
