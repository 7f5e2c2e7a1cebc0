import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { bearer, serviceFixture, type ServiceFixture } from './http-fixtures.js';

// Thousands of random bodies and paths: whatever arrives, the service
// answers a 4xx or a 2xx, never a 5xx, and every error is the problem envelope.

let f: ServiceFixture;
beforeAll(async () => {
  f = await serviceFixture();
  await f.plane.admit({ tenant: 'acme', run: 'run-1' });
});
afterAll(() => f.close());

const POST_TARGETS = [
  '/v1/runs',
  '/v1/runs/run-1/settle',
  '/v1/runs/run-1/resume',
  '/v1/runs/run-1/dispatches',
  '/v1/tenants/acme/halts',
  '/v1/tenants/acme/halts/lift',
  '/v1/runs/run-1/heartbeat',
  '/v1/tenants/acme/runs/run-1/settle',
  '/v1/tenants/acme/runs/run-1/release',
  '/v1/sweep',
];

const segment = fc.oneof(
  fc.constantFrom('v1', 'runs', 'tenants', 'acme', 'globex', 'halts', 'lift', 'quota', 'usage', 'reservations', 'dispatches', 'settle', 'resume', 'heartbeat', 'release', 'attention', 'audit', 'verify', 'slots', 'sweep', 'metrics', 'run-1', '', '..', '%2F', '%00', '%ZZ'),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);

function expectEnvelopeUnless2xx(status: number, headers: Record<string, unknown>, body: string): void {
  expect(status, body).toBeLessThan(500);
  // Every answer carries its request id, the ones Fastify makes before a route runs too.
  expect(headers['x-request-id'], body).toMatch(/^req_/);
  if (status >= 400) {
    expect(headers['content-type']).toMatch(/^application\/problem\+json/);
    expect((JSON.parse(body) as { status: number }).status).toBe(status);
  }
}

describe('fuzz: random requests never get a 5xx', () => {
  it('random JSON bodies on every POST route, with runner and operator keys', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...POST_TARGETS),
        fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.record({ tenant: fc.constantFrom('acme', 'globex', ''), epoch: fc.integer(), spend: fc.jsonValue({ maxDepth: 2 }) })),
        fc.boolean(),
        async (url, body, asOperator) => {
          const response = await f.app.inject({
            method: 'POST',
            url,
            headers: { ...bearer(asOperator ? f.key.opAll : f.key.runAcme), 'content-type': 'application/json' },
            payload: JSON.stringify(body) ?? 'null',
          });
          expectEnvelopeUnless2xx(response.statusCode, response.headers, response.body);
        },
      ),
      { numRuns: 1200 },
    );
  });

  it('random methods, paths, query strings and raw bodies', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
        fc.array(segment, { minLength: 0, maxLength: 6 }),
        fc.option(fc.dictionary(fc.constantFrom('limit', 'state', 'period', 'tenant', 'status', 'after', 'action', 'holdStaleAfterMs', 'atMs', 'x'), fc.string({ maxLength: 8 })), { nil: undefined }),
        fc.option(fc.string({ maxLength: 64 }), { nil: undefined }),
        fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined),
        async (method, segments, query, raw, contentType) => {
          const search = query === undefined ? '' : `?${new URLSearchParams(query).toString()}`;
          const response = await f.app.inject({
            method: method as 'GET',
            url: `/${segments.join('/')}${search}`,
            headers: { ...bearer(f.key.opAll), ...(contentType === undefined ? {} : { 'content-type': contentType }) },
            ...(raw === undefined || method === 'GET' ? {} : { payload: raw }),
          });
          expectEnvelopeUnless2xx(response.statusCode, response.headers, response.body);
        },
      ),
      { numRuns: 1200 },
    );
  });
});
