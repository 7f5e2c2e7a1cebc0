import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createClient, type QuotaplaneClient } from '../../src/client/create-client.js';
import { decodeProblem } from '../../src/client/problem-decoding.js';
import { QuotaError } from '../../src/core/errors.js';
import { injectFetch, serviceFixture, T0, type ServiceFixture } from '../http/http-fixtures.js';
import { fault } from './plane-scenarios.js';

describe('the HTTP client with a runner key', () => {
  let fixture: ServiceFixture;
  let runner: QuotaplaneClient;

  beforeEach(async () => {
    fixture = await serviceFixture();
    runner = createClient({ url: 'http://quotaplane.test/', key: fixture.key.runAcme.secret, fetch: injectFetch(fixture.app) });
  });
  afterEach(() => fixture.close());

  it('acts for its own tenant: admit, dispatch, usage and settle reach acme', async () => {
    const pass = await runner.admit({ tenant: 'acme', run: 'run-1', budget: { maxTokens: 10, maxCallTokens: 5 } });
    expect(pass).toMatchObject({ ok: true, run: 'run-1', epoch: 1, period: '2026-01' });
    expect(await runner.dispatch({ tenant: 'acme', run: 'run-1', grant: 'tool://mail/send', dispatch: 'k1', ceilings: [] })).toEqual({ ok: true });
    expect((await runner.usage({ tenant: 'acme' })).running).toBe(1);
    const settled = await runner.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 3, minorUnits: 0 }, concludes: true });
    expect(settled.outcome).toBe('settled');
    expect(await fixture.plane.usage({ tenant: 'acme' })).toMatchObject({ running: 0, spent: { tokens: 3, minorUnits: 0 } });
  });

  it('another tenant is NOT_FOUND, and nothing was admitted for it', async () => {
    expect(await fault(() => runner.admit({ tenant: 'globex', run: 'run-1' }))).toEqual({ error: 'NOT_FOUND' });
    expect(await fault(() => runner.usage({ tenant: 'globex' }))).toEqual({ error: 'NOT_FOUND' });
    expect((await fixture.plane.usage({ tenant: 'globex' })).running).toBe(0);
  });

  it('operator verbs are NOT_FOUND for a runner key', async () => {
    expect(await fault(() => runner.getQuota('acme'))).toEqual({ error: 'NOT_FOUND' });
    expect(await fault(() => runner.halt({ tenant: 'acme', scope: 'tenant', reason: 'x', by: { actor: 'me', basis: 'asserted' } }))).toEqual({
      error: 'NOT_FOUND',
    });
    expect(await fault(() => runner.tenants())).toEqual({ error: 'NOT_FOUND' });
    expect(await fault(() => runner.release({ tenant: 'acme', run: 'run-1', by: { actor: 'me', basis: 'asserted' } }))).toEqual({ error: 'NOT_FOUND' });
    expect(await fault(() => runner.attention())).toEqual({ error: 'NOT_FOUND' });
  });

  it('an instant from a runner key is INVALID_ARGUMENT naming atMs, and admits nothing', async () => {
    expect(await fault(() => runner.admit({ tenant: 'acme', run: 'run-1', atMs: T0 - 86_400_000 }))).toEqual({
      error: 'INVALID_ARGUMENT',
      field: 'atMs',
    });
    expect((await fixture.plane.usage({ tenant: 'acme' })).running).toBe(0);
  });

  it('a revoked or unknown key is INVALID_ARGUMENT naming key', async () => {
    const revoked = createClient({ url: 'http://quotaplane.test', key: fixture.key.revoked.secret, fetch: injectFetch(fixture.app) });
    expect(await fault(() => revoked.admit({ tenant: 'acme' }))).toEqual({ error: 'INVALID_ARGUMENT', field: 'key' });
  });
});

describe('the HTTP client with an operator key', () => {
  let fixture: ServiceFixture;
  let ops: QuotaplaneClient;

  beforeEach(async () => {
    fixture = await serviceFixture();
    ops = createClient({ url: 'http://quotaplane.test', key: fixture.key.opAcme.secret, fetch: injectFetch(fixture.app) });
  });
  afterEach(() => fixture.close());

  it('halts and lifts without a `by` at all: the key names the operator', async () => {
    const thrown = await ops.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident', newTenant: true });
    expect(thrown.by).toEqual({ actor: 'ops-acme', basis: 'authenticated' });
    expect(await ops.lift({ tenant: 'acme', scope: 'tenant' })).toMatchObject({ wasStanding: true, removed: true });
  });

  it('records halts under the key name, authenticated, whatever `by` it is given', async () => {
    const thrown = await ops.halt({ tenant: 'acme', scope: { kind: 'agent', name: 'bot' }, reason: 'loop', by: { actor: 'someone-else', basis: 'asserted' }, newTenant: true });
    expect(thrown.by).toEqual({ actor: 'ops-acme', basis: 'authenticated' });
    expect(await ops.halts('acme')).toEqual([{ scope: { kind: 'agent', name: 'bot' }, reason: 'loop', by: { actor: 'ops-acme', basis: 'authenticated' }, atMs: T0 }]);
    await ops.lift({ tenant: 'acme', scope: 'agent:bot', by: { actor: 'x', basis: 'asserted' } });
    const audit = await fixture.store.tenant('acme').auditLog({ limit: 10 });
    expect(audit.map((row) => [row.action, row.by])).toEqual([
      ['lift', { actor: 'ops-acme', basis: 'authenticated' }],
      ['halt', { actor: 'ops-acme', basis: 'authenticated' }],
    ]);
  });

  it('reads the listings: slot holders, runs, holds, recorded lifts, audit rows and tenants, with truncation read rather than guessed', async () => {
    await ops.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 10_000 }, { newTenant: true });
    for (const run of ['run-1', 'run-2', 'run-3']) await ops.admit({ tenant: 'acme', run, budget: { maxTokens: 10, maxCallTokens: 5 } });
    expect(await ops.slotHolders({ tenant: 'acme', limit: 2 })).toEqual({ runs: ['run-1', 'run-2'], truncated: true });
    expect(await ops.slotHolders({ tenant: 'acme' })).toEqual({ runs: ['run-1', 'run-2', 'run-3'], truncated: false });
    const page = await ops.runs({ tenant: 'acme', statuses: ['running', 'stranded'], limit: 2 });
    expect(page).toEqual(await fixture.plane.runs({ tenant: 'acme', statuses: ['running', 'stranded'], limit: 2 }));
    expect(page).toMatchObject({ runs: [{ run: 'run-1', status: 'running', holdsSlot: true }, { run: 'run-2' }], truncated: true, next: 'run-2' });
    expect((await ops.runs({ tenant: 'acme', after: 'run-2' })).runs.map((run) => run.run)).toEqual(['run-3']);
    expect(await ops.reservations({ tenant: 'acme', limit: 3 })).toEqual({
      holds: ['run-1', 'run-2', 'run-3'].map((run) => ({ run, period: '2026-01', remaining: { tokens: 15, minorUnits: 0 } })),
      truncated: false,
    });
    await ops.halt({ tenant: 'acme', scope: 'tenant', reason: 'one', by: { actor: 'x', basis: 'asserted' } });
    await ops.lift({ tenant: 'acme', scope: 'tenant', by: { actor: 'x', basis: 'asserted' } });
    expect((await ops.liftedHalts({ tenant: 'acme', limit: 1 })).lifted).toEqual([
      { scope: 'tenant', by: { actor: 'ops-acme', basis: 'authenticated' }, liftedAtMs: T0, reason: 'one', thrownBy: { actor: 'ops-acme', basis: 'authenticated' }, thrownAtMs: T0, seq: 3 },
    ]);
    expect(await ops.auditLog({ tenant: 'acme', limit: 2 })).toEqual(await fixture.plane.auditLog({ tenant: 'acme', limit: 2 }));
    expect((await ops.auditLog({ tenant: 'acme', action: 'quota.set' })).rows.map((row) => row.action)).toEqual(['quota.set']);
    await fixture.plane.setQuota('globex', { period: 'monthly' }, { newTenant: true });
    expect(await ops.tenants()).toEqual(['acme']);
  });

  it('heartbeats, sweeps, settles and releases as the plane does, the operator acts audited under the key name', async () => {
    await ops.admit({ tenant: 'acme', run: 'run-1', leaseMs: 1000 });
    await ops.admit({ tenant: 'acme', run: 'run-2', leaseMs: 1000 });
    expect(await ops.heartbeat({ tenant: 'acme', run: 'run-1', epoch: 1, leaseMs: 5000 })).toEqual({ ok: true, run: 'run-1', epoch: 1, leaseExpiresAtMs: T0 + 5000 });
    expect(await fault(() => ops.heartbeat({ tenant: 'acme', run: 'run-1', epoch: 2 }))).toEqual({ error: 'NOT_FOUND' });
    fixture.clock.advance(2000);
    expect(await ops.sweep()).toEqual({ atMs: T0 + 2000, swept: [{ tenant: 'acme', run: 'run-2', releasedSlot: true, stranded: true }] });
    const report = await ops.attention({ tenant: 'acme' });
    expect(report).toEqual(await fixture.plane.attention({ tenant: 'acme' }));
    expect(report.conditions.map((condition) => `${condition.kind}:${condition.run}`)).toEqual(['run.stranded:run-2', 'pass.unsettled:run-2']);
    expect(await ops.attention()).toEqual(report);

    const settled = await ops.settle({ tenant: 'acme', run: 'run-2', epoch: 1, spend: { tokens: 4, minorUnits: 0 }, concludes: true, by: { actor: 'x', basis: 'asserted' } });
    expect(settled.outcome).toBe('settled');
    const released = await ops.release({ tenant: 'acme', run: 'run-1', by: { actor: 'x', basis: 'asserted' } });
    expect(released).toMatchObject({ outcome: 'released', previousStatus: 'running', slotReleased: true });
    const audit = await fixture.store.tenant('acme').auditLog({ limit: 10 });
    expect(audit.map((row) => [row.action, row.by])).toEqual([
      ['run.release', { actor: 'ops-acme', basis: 'authenticated' }],
      ['run.settle', { actor: 'ops-acme', basis: 'authenticated' }],
    ]);
    expect(await ops.verifyAudit()).toEqual({ ok: true, tenants: [{ tenant: 'acme', rows: 2, ok: true, firstMismatch: null }] });
    expect(await ops.verifyAudit({ tenant: 'acme' })).toEqual(await fixture.plane.verifyAudit({ tenant: 'acme' }));
  });

  it('L95.7: deletes a tenant only with a key of every tenant, recorded under the key name', async () => {
    await fixture.plane.setQuota('globex', { period: 'monthly' }, { newTenant: true });
    expect(await fault(() => ops.deleteTenant({ tenant: 'acme', reason: 'left' }))).toEqual({ error: 'NOT_FOUND' });
    expect(await ops.tenants()).toEqual(['acme']);
    const all = createClient({ url: 'http://quotaplane.test', key: fixture.key.opAll.secret, fetch: injectFetch(fixture.app) });
    const deleted = await all.deleteTenant({ tenant: 'globex', reason: 'left', by: { actor: 'x', basis: 'asserted' } });
    expect(deleted).toMatchObject({ tenant: 'globex', keysDeleted: [fixture.key.opGlobex.record.id, fixture.key.runGlobex.record.id].sort() });
    expect(deleted.audit).toMatchObject({ action: 'tenant.delete', by: { actor: 'ops-all', basis: 'authenticated' }, detail: { reason: 'left' } });
    expect(await all.tenants()).not.toContain('globex');
  });
});

describe('the HTTP client without a server to answer', () => {
  it('a server that cannot be reached is STORE_UNAVAILABLE: nothing was decided', async () => {
    const client = createClient({
      url: 'http://127.0.0.1:9',
      key: 'qp_x',
      fetch: async () => {
        throw new TypeError('fetch failed: connect ECONNREFUSED 127.0.0.1:9');
      },
    });
    const error = await client.admit({ tenant: 'acme' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QuotaError);
    expect((error as QuotaError).code).toBe('STORE_UNAVAILABLE');
    expect((error as QuotaError).retryable).toBe(true);
  });

  it('refuses a malformed url or key, and a tenant that cannot be a path segment, before sending anything', async () => {
    let sent = 0;
    const fetch = (async () => {
      sent += 1;
      return new Response('{}');
    }) as typeof globalThis.fetch;
    expect(() => createClient({ url: 'localhost:7070', key: 'qp_x', fetch })).toThrow(/url/);
    expect(() => createClient({ url: 'http://127.0.0.1:7070', key: ' ', fetch })).toThrow(/key/);
    const client = createClient({ url: 'http://127.0.0.1:7070', key: 'qp_x', fetch });
    expect(await fault(() => client.getQuota(''))).toEqual({ error: 'INVALID_ARGUMENT', field: 'tenant' });
    expect(await fault(() => client.settle({ tenant: 'acme', run: '', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true }))).toEqual({
      error: 'INVALID_ARGUMENT',
      field: 'run',
    });
    expect(sent).toBe(0);
  });

  it('decodes replies that are not problem documents by status: a proxy 502/503/504 is STORE_UNAVAILABLE, anything else INTERNAL', () => {
    for (const status of [502, 503, 504]) {
      const decoded = decodeProblem(status, undefined);
      expect(decoded.kind === 'fault' ? decoded.error.code : null).toBe('STORE_UNAVAILABLE');
    }
    const other = decodeProblem(500, '<html>oops</html>');
    expect(other.kind === 'fault' ? other.error.code : null).toBe('INTERNAL');
    const unknown = decodeProblem(418, { code: 'TEAPOT', detail: 'short and stout' });
    expect(unknown.kind === 'fault' ? unknown.error.code : null).toBe('INTERNAL');
    const tooLarge = decodeProblem(413, { code: 'PAYLOAD_TOO_LARGE', detail: 'body: too large', field: 'body' });
    expect(tooLarge.kind === 'fault' ? [tooLarge.error.code, tooLarge.error.details.field] : null).toEqual(['INVALID_ARGUMENT', 'body']);
  });

  it('decodes a refusal problem into the refusal value, fields and message intact', () => {
    const decoded = decodeProblem(429, {
      type: 'urn:quotaplane:problem:TooManyRuns',
      title: 'Too many concurrent runs',
      status: 429,
      detail: 'tenant acme has 2 run(s) executing',
      code: 'TooManyRuns',
      tenant: 'acme',
      running: 2,
      limit: 2,
      requestId: 'req_1',
    });
    expect(decoded).toEqual({
      kind: 'refused',
      refused: { ok: false, refusal: { code: 'TooManyRuns', tenant: 'acme', running: 2, limit: 2 }, message: 'tenant acme has 2 run(s) executing' },
    });
  });
});
