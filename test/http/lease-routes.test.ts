import type { InjectOptions } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { bearer, expectProblem, type FixtureKey, GRANT, serviceFixture, T0, type ServiceFixture } from './http-fixtures.js';

// The operator routes: leases (heartbeat, dispatch with epoch), Withheld, the sweep, the operator's
// settle and release, the run registry, attention and the audit log, each one plane call.

const CHAIN = ['user:alice', 'svc-billing'];
const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };
const ALICE = { actor: 'ops-alice', basis: 'asserted' } as const;

let f: ServiceFixture;
beforeEach(async () => {
  f = await serviceFixture();
});
afterEach(() => f.close());

const post = (url: string, payload: object, key: FixtureKey = f.key.runAcme) => f.app.inject({ method: 'POST', url, payload, headers: bearer(key) });
const get = (url: string, key: FixtureKey = f.key.opAcme) => f.app.inject({ method: 'GET', url, headers: bearer(key) });

async function admit(run: string, options: { tenant?: string; leaseMs?: number } = {}): Promise<void> {
  const pass = await f.plane.admit({ tenant: options.tenant ?? 'acme', run, chain: CHAIN, budget: BUDGET, leaseMs: options.leaseMs ?? 60_000 });
  if (!pass.ok) throw new Error(pass.message);
}

describe('leases over HTTP', () => {
  it('a heartbeat renews the lease; a stale epoch answers 409 naming the newer pass', async () => {
    await admit('run-1');
    const renewed = await post('/v1/runs/run-1/heartbeat', { epoch: 1, leaseMs: 120_000 });
    expect(renewed.json()).toEqual({ ok: true, run: 'run-1', epoch: 1, leaseExpiresAtMs: T0 + 120_000 });
    await f.plane.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: false });
    await f.plane.resume({ tenant: 'acme', run: 'run-1' });
    const stale = expectProblem(await post('/v1/runs/run-1/heartbeat', { epoch: 1 }), 409, 'CONFLICT');
    expect(stale.detail).toMatch(/epoch|pass/);
    const unknown = await post('/v1/runs/run-nobody/heartbeat', { epoch: 1 });
    expectProblem(unknown, 404, 'NOT_FOUND');
  });

  it('a dispatch with epoch renews the lease, and a stale epoch is 409 with nothing counted', async () => {
    await admit('run-1');
    const dispatch = { grant: GRANT, dispatch: 'd-1', ceilings: [{ count: 5, windowSeconds: 60 }] };
    expect((await post('/v1/runs/run-1/dispatches', { ...dispatch, epoch: 1, leaseMs: 90_000 })).json()).toEqual({ ok: true });
    expect((await f.plane.runs({ tenant: 'acme' })).runs[0]?.leaseExpiresAtMs).toBe(T0 + 90_000);
    await f.plane.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: false });
    await f.plane.resume({ tenant: 'acme', run: 'run-1' });
    expectProblem(await post('/v1/runs/run-1/dispatches', { ...dispatch, dispatch: 'd-2', epoch: 1 }), 409, 'CONFLICT');
    expectProblem(await post('/v1/runs/run-1/dispatches', { ...dispatch, dispatch: 'd-3', epoch: 3 }), 404, 'NOT_FOUND');
    const room = await f.store.tenant('acme').rateRoom(GRANT, [{ count: 1, windowSeconds: 60 }], T0);
    expect(room.ok ? 0 : room.refusal.code === 'RateLimited' ? room.refusal.reached : -1).toBe(1);
  });

  it('leaseMs without epoch on a dispatch is 400 naming leaseMs', async () => {
    await admit('run-1');
    const problem = expectProblem(await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-1', ceilings: [], leaseMs: 5000 }), 400, 'INVALID_ARGUMENT');
    expect(problem.field).toBe('leaseMs');
  });

  it('a subject halt withholds heartbeat, dispatch and resume with 423 and the envelope; after the lift a resume continues', async () => {
    await admit('run-1');
    await post('/v1/tenants/acme/halts', { scope: 'subject:svc-billing', reason: 'credential leaked' }, f.key.opAcme);

    const heartbeat = expectProblem(await post('/v1/runs/run-1/heartbeat', { epoch: 1, leaseMs: 120_000 }), 423, 'Withheld');
    expect(heartbeat).toMatchObject({ subject: 'svc-billing', reason: 'credential leaked' });
    expect((await f.plane.runs({ tenant: 'acme' })).runs[0]).toMatchObject({ status: 'withheld', leaseExpiresAtMs: T0 + 60_000 });
    const dispatch = await post('/v1/runs/run-1/dispatches', { grant: GRANT, dispatch: 'd-1', ceilings: [], epoch: 1 });
    expect(dispatch.headers['retry-after']).toBeUndefined();
    expectProblem(dispatch, 423, 'Withheld');

    // The runner pauses: it settles the pass without concluding. A resume is withheld until the lift.
    await post('/v1/runs/run-1/settle', { epoch: 1, spend: { tokens: 3, minorUnits: 0 }, concludes: false });
    expectProblem(await post('/v1/runs/run-1/resume', {}), 423, 'Withheld');
    await post('/v1/tenants/acme/halts/lift', { scope: 'subject:svc-billing' }, f.key.opAcme);
    expect((await post('/v1/runs/run-1/resume', {})).json()).toMatchObject({ ok: true, run: 'run-1', epoch: 2 });
  });
});

describe('operator acts and listings over HTTP', () => {
  it('sweep strands lapsed runs of the tenants the key covers; a tenant it does not cover is 404', async () => {
    await admit('run-1', { leaseMs: 1000 });
    await admit('run-2', { tenant: 'globex', leaseMs: 1000 });
    f.clock.advance(2000);
    expectProblem(await post('/v1/sweep', { tenant: 'globex' }, f.key.opAcme), 404, 'NOT_FOUND');
    expect((await post('/v1/sweep', {}, f.key.opAcme)).json()).toEqual({ atMs: T0 + 2000, swept: [{ tenant: 'acme', run: 'run-1', releasedSlot: true, stranded: true }] });
    expect((await post('/v1/sweep', {}, f.key.opAll)).json()).toEqual({ atMs: T0 + 2000, swept: [{ tenant: 'globex', run: 'run-2', releasedSlot: true, stranded: true }] });

    const stranded = await get('/v1/tenants/acme/runs?status=stranded');
    expect(stranded.json()).toEqual({
      runs: [
        {
          run: 'run-1',
          status: 'stranded',
          agent: null,
          chain: CHAIN,
          admittedAtMs: T0,
          lastEpoch: 1,
          statusSinceMs: T0 + 1000,
          holdsSlot: false,
          leaseExpiresAtMs: T0 + 1000,
        },
      ],
      truncated: false,
      next: null,
    });
    expect((await get('/v1/tenants/acme/runs?status=running')).json()).toEqual({ runs: [], truncated: false, next: null });
  });

  it('the registry pages by run id with next and after', async () => {
    for (const run of ['run-c', 'run-a', 'run-b']) await admit(run);
    const first = (await get('/v1/tenants/acme/runs?limit=2')).json<{ runs: { run: string }[]; truncated: boolean; next: string | null }>();
    expect([first.runs.map((run) => run.run), first.truncated, first.next]).toEqual([['run-a', 'run-b'], true, 'run-b']);
    const second = (await get(`/v1/tenants/acme/runs?limit=2&after=${first.next}`)).json<{ runs: { run: string }[]; next: string | null }>();
    expect([second.runs.map((run) => run.run), second.next]).toEqual([['run-c'], null]);
  });

  it("an operator's settle and release are audited under the key name, authenticated; a conflicting settle is 409", async () => {
    await f.plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
    await admit('run-1', { leaseMs: 1000 });
    await admit('run-2', { leaseMs: 1000 });
    f.clock.advance(2000);
    await f.plane.sweep();
    const settle = { epoch: 1, spend: { tokens: 40, minorUnits: 2 }, concludes: true };
    const settled = await post('/v1/tenants/acme/runs/run-1/settle', settle, f.key.opAcme);
    expect(settled.json()).toEqual({
      ok: true,
      outcome: 'settled',
      receipt: { run: 'run-1', epoch: 1, period: '2026-01', spend: { tokens: 40, minorUnits: 2 }, releaseSlot: true, concludes: true },
      overrun: { tokens: 0, minorUnits: 0 },
    });
    expect((await post('/v1/tenants/acme/runs/run-1/settle', settle, f.key.opAcme)).json()).toMatchObject({ outcome: 'already-settled' });
    expectProblem(await post('/v1/tenants/acme/runs/run-1/settle', { ...settle, spend: { tokens: 41, minorUnits: 2 } }, f.key.opAcme), 409, 'CONFLICT');

    const released = (await post('/v1/tenants/acme/runs/run-2/release', {}, f.key.opAcme)).json<Record<string, unknown>>();
    expect(released).toMatchObject({ outcome: 'released', run: 'run-2', previousStatus: 'stranded', slotReleased: false, holdReleased: { run: 'run-2', period: '2026-01', remaining: { tokens: 1100, minorUnits: 0 } } });
    expect((await post('/v1/tenants/acme/runs/run-2/release', {}, f.key.opAcme)).json()).toMatchObject({ outcome: 'already-closed', audit: null });
    expectProblem(await post('/v1/tenants/acme/runs/run-nobody/release', {}, f.key.opAcme), 404, 'NOT_FOUND');

    const audit = (await get('/v1/tenants/acme/audit')).json<{ rows: { action: string; by: unknown; subject: string }[]; truncated: boolean }>();
    expect(audit.rows.map((row) => [row.action, row.subject, row.by])).toEqual([
      ['run.release', 'run-2', { actor: 'ops-acme', basis: 'authenticated' }],
      ['run.settle', 'run-1', { actor: 'ops-acme', basis: 'authenticated' }],
      ['quota.set', 'quota', { actor: 'library', basis: 'asserted' }],
    ]);
    expect((await get('/v1/tenants/acme/audit?action=run.settle&limit=1')).json()).toMatchObject({ rows: [{ action: 'run.settle' }], truncated: false });
    expect((await get('/v1/tenants/acme/audit/verify')).json()).toEqual({ ok: true, tenants: [{ tenant: 'acme', rows: 3, ok: true, firstMismatch: null }] });
  });

  it('attention answers per tenant, and across the tenants the key covers on /v1/attention', async () => {
    await admit('run-1', { leaseMs: 1000 });
    await admit('run-2', { tenant: 'globex', leaseMs: 1000 });
    f.clock.advance(2000);
    await f.plane.sweep();
    const kinds = (response: { json: <T>() => T }) =>
      response.json<{ conditions: { kind: string; tenant: string; run: string }[] }>().conditions.map((c) => `${c.kind}:${c.tenant}/${c.run}`);
    const acme = await get('/v1/tenants/acme/attention');
    expect(acme.json()).toEqual(await f.plane.attention({ tenant: 'acme' }));
    expect(kinds(acme)).toEqual(['run.stranded:acme/run-1', 'pass.unsettled:acme/run-1']);
    expect(kinds(await get('/v1/attention'))).toEqual(['run.stranded:acme/run-1', 'pass.unsettled:acme/run-1']);
    expect(kinds(await get('/v1/attention', f.key.opAll))).toEqual([
      'run.stranded:acme/run-1',
      'run.stranded:globex/run-2',
      'pass.unsettled:acme/run-1',
      'pass.unsettled:globex/run-2',
    ]);
    expect((await get('/v1/attention?limit=1', f.key.opAll)).json()).toMatchObject({ truncated: true, truncatedKinds: ['run.stranded', 'pass.unsettled'] });
    expectProblem(await get('/v1/tenants/globex/attention'), 404, 'NOT_FOUND');
  });

  it('every HTTP remedy that attention names is a route that answers 200 when sent as written, placeholders filled in', async () => {
    await f.plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
    await admit('run-dead', { leaseMs: 1000 });
    await admit('run-withheld');
    await admit('run-idle');
    await f.plane.settle({ tenant: 'acme', run: 'run-idle', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: false });
    await f.plane.halt({ tenant: 'acme', scope: 'subject:svc-billing', reason: 'credential leaked', by: ALICE });
    await f.plane.heartbeat({ tenant: 'acme', run: 'run-withheld', epoch: 1 });
    await f.plane.settle({ tenant: 'acme', run: 'run-withheld', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: false });
    f.clock.advance(2000);
    await f.plane.sweep();

    const report = (await get('/v1/tenants/acme/attention?holdStaleAfterMs=1000')).json<{ conditions: { kind: string; remedy: { http: string[] } }[] }>();
    expect(report.conditions.map((condition) => condition.kind).sort()).toEqual(['hold.stale', 'pass.unsettled', 'run.stranded', 'run.withheld']);
    const sent: string[] = [];
    for (const condition of report.conditions) {
      for (const line of condition.remedy.http) {
        const request = remedyRequest(line);
        const response = await f.app.inject({ ...request, headers: bearer(f.key.opAll) });
        expect(response.statusCode, `${line} → ${response.body}`).toBe(200);
        sent.push(`${request.method} ${String(request.url)}`);
      }
    }
    expect(sent).toContain('POST /v1/tenants/acme/halts/lift');
    expect(sent).toContain('POST /v1/runs/run-withheld/resume');
  });
});

/** A remedy line, `METHOD /path [json]`, as a request with its placeholders filled in. */
function remedyRequest(line: string): InjectOptions {
  const match = /^(GET|POST|PUT) (\S+)(?: (.*))?$/.exec(line);
  if (match === null) throw new Error(`not a remedy request: ${line}`);
  const [, method = 'GET', url = '/', body] = match;
  const filled = body?.replace('<tokens>', '0').replace('<minorUnits>', '0').replace('<true|false>', 'true');
  return { method: method as 'POST', url, ...(filled === undefined ? {} : { payload: JSON.parse(filled) as object }) };
}
