import { afterEach, describe, expect, it } from 'vitest';

import { RefusalHistory } from '../../src/http/refusal-history.js';
import { bearer, expectProblem, serviceFixture, T0, type ServiceFixture } from './http-fixtures.js';

// The routes the dashboard's plane view and bulk release read: GET /v1/plane/refusals (this
// instance's refused admissions per tenant per minute, in memory) and
// POST /v1/tenants/{tenant}/runs/release-stranded (each run released and audited as one release).

let f: ServiceFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };

describe('GET /v1/plane/refusals', () => {
  it('counts refused admissions per tenant per minute over the last hour, for operators of every tenant only', async () => {
    f = await serviceFixture();
    await f.plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 0 }, { newTenant: true });
    const admit = (run: string) => f!.app.inject({ method: 'POST', url: '/v1/runs', headers: bearer(f!.key.runAcme), payload: { run } });
    expect((await admit('run-1')).statusCode).toBe(429);
    expect((await admit('run-2')).statusCode).toBe(429);
    f.clock.advance(60_000);
    expect((await admit('run-3')).statusCode).toBe(429);

    const answer = await f.app.inject({ method: 'GET', url: '/v1/plane/refusals', headers: bearer(f.key.opAll) });
    expect(answer.statusCode).toBe(200);
    const body = answer.json();
    expect(body).toMatchObject({ sinceMs: T0, minuteMs: 60_000, tenantBound: 50 });
    expect(body.minutes).toHaveLength(60);
    expect(body.minutes.at(-1)).toBe(T0 + 60_000);
    expect(body.tenants).toEqual([{ tenant: 'acme', total: 3, perMinute: [...Array(58).fill(0), 2, 1] }]);
    expect(body.other).toEqual(Array(60).fill(0));

    // An hour on, those minutes have left the window.
    f.clock.advance(3_600_000);
    expect((await f.app.inject({ method: 'GET', url: '/v1/plane/refusals', headers: bearer(f.key.opAll) })).json().tenants).toEqual([]);
    expectProblem(await f.app.inject({ method: 'GET', url: '/v1/plane/refusals', headers: bearer(f.key.opAcme) }), 404, 'NOT_FOUND');
  });

  it('keeps bounded memory: at most tenantBound tenants by name per minute, the rest summed in other', () => {
    const history = new RefusalHistory(2, T0);
    for (const tenant of ['a', 'b', 'c', 'd', 'a']) history.record(tenant, T0);
    history.record('c', T0 + 60_000);
    history.record('c', T0 + 60_000);
    history.record('zz', T0 - 1); // an earlier minute than its slot would hold is dropped, never wipes newer counts
    const snapshot = history.snapshot(T0 + 60_000);
    expect(snapshot.tenants.map((row) => [row.tenant, row.total])).toEqual([
      ['a', 2],
      ['c', 2],
    ]);
    // b (1 in minute 0) falls out of the busiest two and joins other with the two uncounted names.
    expect(snapshot.other.slice(-2)).toEqual([3, 0]);
    history.record('late', T0 - 3_600_000);
    expect(history.snapshot(T0 + 60_000).tenants.map((row) => row.tenant)).not.toContain('late');
  });
});

describe('POST /v1/tenants/{tenant}/runs/release-stranded', () => {
  it('releases the confirmed stranded runs, each audited as run.release under the key name, and skips the rest', async () => {
    f = await serviceFixture();
    await f.plane.setQuota('acme', { period: 'monthly' }, { newTenant: true });
    for (const run of ['run-a', 'run-b', 'run-c']) await f.plane.admit({ tenant: 'acme', run, budget: BUDGET, leaseMs: 60_000 });
    await f.plane.admit({ tenant: 'acme', run: 'run-live', budget: BUDGET, leaseMs: 86_400_000 });
    f.clock.advance(120_000);
    await f.plane.sweep({ tenant: 'acme' });

    const some = await f.app.inject({
      method: 'POST',
      url: '/v1/tenants/acme/runs/release-stranded',
      headers: bearer(f.key.opAcme),
      payload: { runs: ['run-a', 'run-live'] },
    });
    expect(some.statusCode).toBe(200);
    expect(some.json()).toMatchObject({
      tenant: 'acme',
      released: 1,
      failed: 0,
      skipped: 1,
      truncated: false,
      results: [
        { run: 'run-a', result: 'released', outcome: { outcome: 'released', previousStatus: 'stranded', audit: { action: 'run.release', by: { actor: 'ops-acme', basis: 'authenticated' } } } },
        { run: 'run-live', result: 'skipped' },
      ],
    });

    const rest = await f.app.inject({ method: 'POST', url: '/v1/tenants/acme/runs/release-stranded', headers: bearer(f.key.opAll), payload: {} });
    expect(rest.json().results.map((r: { run: string; result: string }) => `${r.run}:${r.result}`)).toEqual(['run-b:released', 'run-c:released']);
    const audit = await f.store.tenant('acme').auditLog({ limit: 10 });
    expect(audit.filter((row) => row.action === 'run.release').map((row) => row.subject).sort()).toEqual(['run-a', 'run-b', 'run-c']);
    expect((await f.plane.runs({ tenant: 'acme', statuses: ['running'] })).runs.map((r) => r.run)).toEqual(['run-live']);

    // The single release takes the same guard: a running run is not released when ifStatus says stranded.
    const guarded = expectProblem(
      await f.app.inject({ method: 'POST', url: '/v1/tenants/acme/runs/run-live/release', headers: bearer(f.key.opAll), payload: { ifStatus: 'stranded' } }),
      409,
      'CONFLICT',
    );
    expect(guarded.detail).toMatch(/run 'run-live' of tenant 'acme' is running now, not stranded; nothing was released/);
    expectProblem(await f.app.inject({ method: 'POST', url: '/v1/tenants/acme/runs/release-stranded', headers: bearer(f.key.runAcme), payload: {} }), 404, 'NOT_FOUND');
    expectProblem(await f.app.inject({ method: 'POST', url: '/v1/tenants/acme/runs/release-stranded', headers: bearer(f.key.opGlobex), payload: {} }), 404, 'NOT_FOUND');
  });
});
