import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createClient } from '../../src/client/create-client.js';
import { bearer, expectProblem, injectFetch, serviceFixture, T0, type ServiceFixture } from './http-fixtures.js';

// Over HTTP: POST /v1/prune takes an operator key, validates its body with the
// route schema, prunes what the key covers, and records the key's name in the audit log.

const DAY_MS = 86_400_000;
let fixture: ServiceFixture;

beforeEach(async () => {
  fixture = await serviceFixture();
  const { plane } = fixture;
  for (const [tenant, run] of [['acme', 'run-a'], ['acme', 'run-b'], ['globex', 'run-g']] as const) {
    await plane.admit({ tenant, run, atMs: T0 });
    await plane.settle({ tenant, run, epoch: 1, spend: { tokens: 5, minorUnits: 0 }, concludes: true, atMs: T0 });
  }
  fixture.clock.advance(100 * DAY_MS);
});
afterEach(async () => {
  await fixture.close();
});

describe('POST /v1/prune', () => {
  it('an operator key of every tenant prunes every tenant, audited under its name', async () => {
    const response = await fixture.app.inject({ method: 'POST', url: '/v1/prune', headers: bearer(fixture.key.opAll), payload: { olderThanMs: 90 * DAY_MS } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      dryRun: false,
      stopped: false,
      tenants: [
        { tenant: 'acme', runs: 2, passes: 2, receipts: 2 },
        { tenant: 'globex', runs: 1, passes: 1, receipts: 1 },
      ],
      total: { runs: 3 },
    });
    const [row] = (await fixture.plane.auditLog({ tenant: 'acme', action: 'run.prune' })).rows;
    expect(row?.by).toEqual({ actor: 'ops-all', basis: 'authenticated' });
  });

  it("a tenant's operator key prunes only its tenant, and may not name another (404)", async () => {
    const own = await fixture.app.inject({ method: 'POST', url: '/v1/prune', headers: bearer(fixture.key.opAcme), payload: { olderThanMs: 90 * DAY_MS, dryRun: true } });
    expect(own.json()).toMatchObject({ dryRun: true, tenants: [{ tenant: 'acme', runs: 2 }], total: { runs: 2 } });
    const other = await fixture.app.inject({ method: 'POST', url: '/v1/prune', headers: bearer(fixture.key.opAcme), payload: { olderThanMs: 90 * DAY_MS, tenant: 'globex' } });
    expectProblem(other, 404, 'NOT_FOUND');
  });

  it('a runner key finds no such route (404, as every operator route answers it), and a bad body is 400 naming the field; nothing is pruned', async () => {
    const runner = await fixture.app.inject({ method: 'POST', url: '/v1/prune', headers: bearer(fixture.key.runAcme), payload: { olderThanMs: DAY_MS } });
    expectProblem(runner, 404, 'NOT_FOUND');
    for (const [payload, field] of [
      [{ olderThanMs: 0 }, 'olderThanMs'],
      [{ olderThanMs: 'ninety days' }, 'olderThanMs'],
      [{}, 'olderThanMs'],
      [{ olderThanMs: DAY_MS, batchSize: 5000 }, 'batchSize'],
      [{ olderThanMs: DAY_MS, extra: 1 }, 'extra'],
    ] as const) {
      const bad = await fixture.app.inject({ method: 'POST', url: '/v1/prune', headers: bearer(fixture.key.opAll), payload });
      expect(expectProblem(bad, 400, 'INVALID_ARGUMENT').field, JSON.stringify(payload)).toBe(field);
    }
    expect((await fixture.plane.runs({ tenant: 'acme' })).runs).toHaveLength(2);
  });

  it('the client prunes through it with the plane’s shapes; a retried settle of a pruned run is 409 CONFLICT', async () => {
    const client = createClient({ url: 'http://quotaplane.test', key: fixture.key.opAll.secret, fetch: injectFetch(fixture.app) });
    const result = await client.prune({ olderThanMs: 90 * DAY_MS, tenant: 'acme' });
    expect(result.total).toEqual({ runs: 2, passes: 2, receipts: 2, rateDispatches: 0 });
    const retry = await fixture.app.inject({
      method: 'POST',
      url: '/v1/runs/run-a/settle',
      headers: bearer(fixture.key.runAcme),
      payload: { epoch: 1, spend: { tokens: 5, minorUnits: 0 }, concludes: true },
    });
    const problem = expectProblem(retry, 409, 'CONFLICT');
    expect(String(problem.detail)).toContain('pruned');
    expect(problem).toMatchObject({ run: 'run-a', pruned: true, runStatus: 'concluded' });
    expect((await fixture.plane.usage({ tenant: 'acme', period: '2026-01' })).spent.tokens).toBe(10);
  });
});
