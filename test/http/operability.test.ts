import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import type { Plane } from '../../src/plane/plane.js';
import { bearer, serviceFixture, type ServiceFixture } from './http-fixtures.js';

// One log line per request, x-request-id on every answer (the 400s
// Fastify makes before a route runs included), 415 for a body that is not JSON, store faults
// logged with their cause, and per-tenant metrics bounded however many tenants appear.

class Lines extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n')) if (line !== '') this.lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  }
}

let f: ServiceFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

describe('request logs and request ids', () => {
  it('logs one JSON line per request with request id, tenant, key id, route, status, refusal code and latency, never the key', async () => {
    const out = new Lines();
    f = await serviceFixture({ logger: pino({ level: 'info' }, out) });
    await f.plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 0 }, { newTenant: true });
    const response = await f.app.inject({ method: 'POST', url: '/v1/runs', payload: { run: 'run-1' }, headers: { ...bearer(f.key.runAcme), 'x-request-id': 'trace-42' } });
    expect(response.statusCode).toBe(429);
    const requestLines = out.lines.filter((line) => line.reqId === 'trace-42');
    expect(requestLines).toHaveLength(1);
    expect(requestLines[0]).toMatchObject({
      level: 30,
      msg: 'request',
      tenant: 'acme',
      keyId: f.key.runAcme.record.id,
      method: 'POST',
      route: '/v1/runs',
      status: 429,
      code: 'TooManyRuns',
      latencyMs: expect.any(Number),
    });
    expect(JSON.stringify(out.lines)).not.toContain(f.key.runAcme.secret);
  });

  it('a store that cannot answer is logged at warn with its cause, and the answer is 503', async () => {
    const out = new Lines();
    const base = await serviceFixture();
    const failing: Plane = {
      ...base.plane,
      usage: async () => {
        throw new QuotaError('STORE_UNAVAILABLE', 'the PostgreSQL quota store could not answer (ECONNREFUSED)');
      },
    };
    await base.app.close();
    f = await serviceFixture({ plane: failing, store: base.store, keys: base.keys, logger: pino({ level: 'info' }, out) });
    const response = await f.app.inject({ method: 'GET', url: '/v1/usage', headers: bearer(base.key.runAcme) });
    expect(response.statusCode).toBe(503);
    const warning = out.lines.find((line) => line.level === 40);
    expect(warning).toMatchObject({ msg: expect.stringMatching(/store could not answer/), err: { message: expect.stringContaining('ECONNREFUSED') } });
    await base.close();
  });

  it('every answer carries x-request-id, the 400s Fastify makes before a route runs included (bad percent-encoding, over-long path parameters)', async () => {
    f = await serviceFixture();
    const cases = [
      { url: '/%ZZ', status: 400 },
      { url: '/v1/tenants/%ZZ/quota', status: 400 },
      { url: `/v1/tenants/${'a'.repeat(3000)}/quota`, status: 400 },
      { url: `/v1/tenants/${'a'.repeat(201)}/quota`, status: 400 },
      { url: `/v1/tenants/${encodeURIComponent('語'.repeat(200))}/quota`, status: 200 },
    ];
    for (const { url, status } of cases) {
      const response = await f.app.inject({ method: 'GET', url, headers: bearer(f.key.opAll) });
      expect([url.slice(0, 30), response.statusCode]).toEqual([url.slice(0, 30), status]);
      expect(response.headers['x-request-id'], url.slice(0, 30)).toMatch(/^req_/);
      if (status === 400) expect(response.json()).toMatchObject({ code: 'INVALID_ARGUMENT', field: expect.stringMatching(/^(path|tenant)$/) });
    }
  });

  it('a body sent as text/plain or a form answers 415 UNSUPPORTED_MEDIA_TYPE, as documented', async () => {
    f = await serviceFixture();
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const response = await f.app.inject({ method: 'POST', url: '/v1/runs', payload: '{"run":"run-1"}', headers: { ...bearer(f.key.runAcme), 'content-type': contentType } });
      expect([contentType, response.statusCode, response.json().code]).toEqual([contentType, 415, 'UNSUPPORTED_MEDIA_TYPE']);
      expect(response.headers['x-request-id']).toMatch(/^req_/);
    }
  });
});

describe('bounded metrics', () => {
  it('a flood of tenants keeps the busiest N as their own series and sums the rest into tenant="other"', async () => {
    f = await serviceFixture({ metricsTenants: 3 });
    for (let index = 0; index < 40; index += 1) {
      const tenant = `flood-${String(index).padStart(2, '0')}`;
      // flood-3x hold 3 runs, flood-2x 2 …; 39 and 38 get one more: the busiest are 38, 39, then flood-30 (ties by name).
      for (let run = 0; run < Math.floor(index / 10); run += 1) await f.plane.admit({ tenant, run: `run-${run}` });
      if (index < 10) await f.plane.setQuota(tenant, { period: 'monthly', maxConcurrentRuns: 5 }, { newTenant: true });
    }
    await f.plane.admit({ tenant: 'flood-39', run: 'extra-1' });
    await f.plane.admit({ tenant: 'flood-38', run: 'extra-1' });
    const text = (await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) })).body;
    const series = [...text.matchAll(/^quotaplane_tenant_running_runs\{tenant="([^"]+)"\} (\d+)$/gm)].map((match) => [match[1], Number(match[2])]);
    expect(series).toHaveLength(4);
    expect(Object.fromEntries(series)).toEqual({ 'flood-39': 4, 'flood-38': 4, 'flood-30': 3, other: 3 * 7 + 2 * 10 + 1 * 10 });
    expect(text).toContain('quotaplane_tenants{series="own"} 3');
    // The other 37 flood tenants, and acme and globex, which the fixture's keys make tenants (rules.md#l95).
    expect(text).toContain('quotaplane_tenants{series="other"} 39');
    expect(text.match(/^quotaplane_tenant_reserved_tokens\{/gm)).toHaveLength(4);
  });
});
