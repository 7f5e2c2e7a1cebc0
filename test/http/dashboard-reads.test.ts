import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createClient } from '../../src/client/create-client.js';
import { bearer, expectProblem, GRANT, injectFetch, type ServiceFixture, serviceFixture, T0 } from './http-fixtures.js';

// The reads the dashboard adds: the spend of recent periods, the rate windows, and who a key is.

const DAY_MS = 86_400_000;
const budget = { maxTokens: 1000, maxCallTokens: 100, maxMinorUnits: 5000, maxCallMinorUnits: 500 };

describe('dashboard reads', () => {
  let fixture: ServiceFixture;
  beforeEach(async () => {
    fixture = await serviceFixture();
  });
  afterEach(async () => {
    await fixture.close();
  });

  it('GET /v1/tenants/{tenant}/spend answers settled and held spend per daily period, oldest first', async () => {
    const { plane, clock, app, key } = fixture;
    await plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 100_000, maxMinorUnitsPerPeriod: 1_000_000 }, { newTenant: true });
    // Day 1 (2026-01-05): one run settles 300 tokens and 40 minor units.
    const first = await plane.admit({ tenant: 'acme', run: 'run-1', budget });
    if (!first.ok) throw new Error(first.message);
    await plane.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 300, minorUnits: 40 }, concludes: true });
    // Day 3 (2026-01-07): one run is admitted and still holds its whole hold.
    clock.advance(2 * DAY_MS);
    const second = await plane.admit({ tenant: 'acme', run: 'run-2', budget });
    if (!second.ok || second.hold === null) throw new Error('run-2 was not admitted with a hold');

    const response = await app.inject({ method: 'GET', url: '/v1/tenants/acme/spend?periods=4', headers: bearer(key.opAcme) });
    expect(response.statusCode, response.body).toBe(200);
    const zero = { tokens: 0, minorUnits: 0 };
    expect(response.json()).toEqual({
      tenant: 'acme',
      periodKind: 'daily',
      periods: [
        { period: '2026-01-04', spent: zero, reserved: zero },
        { period: '2026-01-05', spent: { tokens: 300, minorUnits: 40 }, reserved: zero },
        { period: '2026-01-06', spent: zero, reserved: zero },
        { period: '2026-01-07', spent: zero, reserved: second.hold },
      ],
      quota: { period: 'daily', maxTokensPerPeriod: 100_000, maxMinorUnitsPerPeriod: 1_000_000 },
    });
  });

  it('GET /v1/tenants/{tenant}/spend defaults to 12 monthly periods for a tenant without a quota', async () => {
    const { app, key, plane } = fixture;
    await plane.admit({ tenant: 'globex', run: 'run-g' });
    await plane.settle({ tenant: 'globex', run: 'run-g', epoch: 1, spend: { tokens: 7, minorUnits: 3 }, concludes: true });
    const response = await app.inject({ method: 'GET', url: '/v1/tenants/globex/spend', headers: bearer(key.opAll) });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<{ periodKind: string; periods: { period: string; spent: unknown }[]; quota: unknown }>();
    expect(body.periodKind).toBe('monthly');
    expect(body.quota).toBeNull();
    expect(body.periods.map((row) => row.period)).toEqual([
      '2025-02', '2025-03', '2025-04', '2025-05', '2025-06', '2025-07', '2025-08', '2025-09', '2025-10', '2025-11', '2025-12', '2026-01',
    ]);
    expect(body.periods.at(-1)?.spent).toEqual({ tokens: 7, minorUnits: 3 });
  });

  it('GET /v1/tenants/{tenant}/rates answers each configured ceiling with the dispatches its window holds now', async () => {
    const { plane, clock, app, key } = fixture;
    await plane.setQuota('acme', { period: 'monthly', rateCeilings: { [GRANT]: [{ count: 5, windowSeconds: 60 }, { count: 50, windowSeconds: 3600 }] } }, { newTenant: true });
    const pass = await plane.admit({ tenant: 'acme', run: 'run-r' });
    if (!pass.ok) throw new Error(pass.message);
    for (const dispatch of ['d-1', 'd-2', 'd-3']) {
      const outcome = await plane.dispatch({ tenant: 'acme', run: 'run-r', grant: GRANT, dispatch, ceilings: [] });
      expect(outcome.ok).toBe(true);
    }
    clock.advance(120_000); // the three leave the 60 s window, and stay in the hour
    await plane.dispatch({ tenant: 'acme', run: 'run-r', grant: GRANT, dispatch: 'd-4', ceilings: [] });

    const response = await app.inject({ method: 'GET', url: '/v1/tenants/acme/rates', headers: bearer(key.opAcme) });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      tenant: 'acme',
      atMs: T0 + 120_000,
      windows: [
        { grant: GRANT, ceiling: { count: 5, windowSeconds: 60 }, counted: 1 },
        { grant: GRANT, ceiling: { count: 50, windowSeconds: 3600 }, counted: 4 },
      ],
    });
  });

  it('GET /v1/tenants/{tenant}/rates answers no windows for a tenant without configured ceilings', async () => {
    const response = await fixture.app.inject({ method: 'GET', url: '/v1/tenants/acme/rates', headers: bearer(fixture.key.opAll) });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ tenant: 'acme', atMs: T0, windows: [] });
  });

  it('the client reads the same spend history and rate windows as the plane', async () => {
    const { plane, app, key } = fixture;
    await plane.setQuota('acme', { period: 'daily', rateCeilings: { [GRANT]: [{ count: 2, windowSeconds: 10 }] } }, { newTenant: true });
    const client = createClient({ url: 'http://quotaplane.test', key: key.opAll.secret, fetch: injectFetch(app) });
    expect(await client.spendHistory({ tenant: 'acme', periods: 2 })).toEqual(await plane.spendHistory({ tenant: 'acme', periods: 2 }));
    expect(await client.rateWindows({ tenant: 'acme' })).toEqual(await plane.rateWindows({ tenant: 'acme' }));
  });

  it('GET /v1/key names the key, its role and tenant, never its secret', async () => {
    const { app, key } = fixture;
    for (const [fixtureKey, role, tenant] of [
      [key.opAll, 'operator', '*'],
      [key.opAcme, 'operator', 'acme'],
      [key.runAcme, 'runner', 'acme'],
    ] as const) {
      const response = await app.inject({ method: 'GET', url: '/v1/key', headers: bearer(fixtureKey) });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({ id: fixtureKey.record.id, name: fixtureKey.record.name, role, tenant });
      expect(response.body).not.toContain(fixtureKey.secret);
    }
  });

  it('GET /v1/key answers 401 without a key or with a revoked one', async () => {
    const { app, key } = fixture;
    expectProblem(await app.inject({ method: 'GET', url: '/v1/key' }), 401, 'UNAUTHENTICATED');
    expectProblem(await app.inject({ method: 'GET', url: '/v1/key', headers: bearer(key.revoked) }), 401, 'UNAUTHENTICATED');
  });
});
