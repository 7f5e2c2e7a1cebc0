import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createClient } from '../../src/client/create-client.js';
import { isQuotaError } from '../../src/core/errors.js';
import { isReservedTenant, requireCustomerTenant } from '../../src/core/identifiers.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { runCli, temporaryDirectory } from '../cli/cli-helpers.js';
import { bearer, expectProblem, injectFetch, serviceFixture, T0, type ServiceFixture } from './http-fixtures.js';

// Tenant names beginning `quotaplane:` are quotaplane's own audit chains (quotaplane:plane,
// quotaplane:keys): no admission, quota, halt, weight or key for them on any surface; readable
// with audit; left out of tenant listings, status, metrics and attention.

const RESERVED = ['quotaplane:plane', 'quotaplane:keys', 'quotaplane:anything'] as const;

async function refusal(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!isQuotaError(error, 'INVALID_ARGUMENT')) throw new Error(`expected INVALID_ARGUMENT, got ${String(error)}`);
  expect(error.details.field).toBe('tenant');
  expect(error.message).toContain("a prefix reserved for quotaplane's own audit chains");
  return error;
}

let fixture: ServiceFixture;
beforeEach(async () => {
  fixture = await serviceFixture();
  // Both reserved chains hold rows, as they do in any store with a plane ceiling and keys.
  await fixture.plane.setPlaneCeiling({ maxConcurrentRuns: 10 }, { actor: 'ops', basis: 'asserted' });
  await fixture.store.tenant('quotaplane:keys').appendAudit({ atMs: T0, by: { actor: 'ops', basis: 'asserted' }, action: 'key.create', subject: 'k1', detail: {} });
  await fixture.plane.admit({ tenant: 'acme', run: 'r1', atMs: T0 });
});
afterEach(async () => {
  await fixture.close();
});

describe('reserved tenant names (quotaplane:…)', () => {
  it('the rule: a name beginning quotaplane: is reserved, any other tenant name is not', () => {
    for (const name of RESERVED) expect(isReservedTenant(name)).toBe(true);
    for (const name of ['acme', 'quotaplane', 'Quotaplane:plane', 'x:quotaplane:plane']) {
      expect(isReservedTenant(name)).toBe(false);
      expect(requireCustomerTenant('tenant', name)).toBe(name);
    }
  });

  it('the library refuses every admission and tenant-scoped write to a reserved name, writing nothing', async () => {
    const { plane, store } = fixture;
    const by = { actor: 'ops', basis: 'asserted' } as const;
    const chainBefore = await store.tenant('quotaplane:plane').auditChain({ afterSeq: 0, limit: 100 });
    for (const tenant of RESERVED) {
      await refusal(plane.admit({ tenant, run: 'r9', atMs: T0 }));
      await refusal(plane.resume({ tenant, run: 'r9', atMs: T0 }));
      await refusal(plane.heartbeat({ tenant, run: 'r9', epoch: 1, atMs: T0 }));
      await refusal(plane.dispatch({ tenant, run: 'r9', grant: 'tool://x', dispatch: 'd1', atMs: T0 }));
      await refusal(plane.setQuota(tenant, { period: 'monthly', maxConcurrentRuns: 5 }, by));
      await refusal(plane.updateQuota(tenant, { maxConcurrentRuns: 5 }, by));
      await refusal(plane.halt({ tenant, scope: 'tenant', reason: 'test', by }));
    }
    const weight = await plane.setPlaneCeiling({ maxConcurrentRuns: 10, weights: { 'quotaplane:keys': 2 } }, by).catch((error: unknown) => error);
    expect(isQuotaError(weight, 'INVALID_ARGUMENT') && /reserved for quotaplane's own audit chains/.test(weight.message)).toBe(true);
    expect(await store.tenant('quotaplane:plane').auditChain({ afterSeq: 0, limit: 100 })).toEqual(chainBefore);
    expect(await store.tenant('quotaplane:keys').getQuota()).toBeNull();
    expect((await plane.planeStatus()).running).toBe(1);
  });

  it('listings, metrics and attention leave the reserved chains out; audit still reads and verifies them', async () => {
    const { plane, app } = fixture;
    // acme, and globex, a tenant of the fixture's keys (rules.md#l95); never a reserved chain.
    expect(await plane.tenants()).toEqual(['acme', 'globex']);
    const listed = await app.inject({ method: 'GET', url: '/v1/tenants', headers: bearer(fixture.key.opAll) });
    expect(JSON.stringify(listed.json())).not.toContain('quotaplane:');
    const metrics = (await app.inject({ method: 'GET', url: '/metrics', headers: bearer(fixture.key.opAll) })).body;
    expect(metrics).toContain('tenant="acme"');
    expect(metrics).not.toContain('tenant="quotaplane:');
    // A run the store holds under a reserved name (written past the plane, as a store from before
    // the rule may) lapses: attention names acme's lapsed run, never the reserved chain's.
    await fixture.store.tenant('quotaplane:plane').admit({ run: 'old', budget: {}, width: 0, atMs: T0, leaseMs: 1000 });
    const attention = await plane.attention({ atMs: T0 + 86_400_000 });
    const named = attention.conditions.map((condition) => condition.tenant);
    expect(named).toContain('acme');
    expect(named.some((tenant) => tenant.startsWith('quotaplane:'))).toBe(false);
    expect((await plane.auditLog({ tenant: 'quotaplane:plane' })).rows.map((row) => row.action)).toEqual(['plane.set']);
    const verified = await plane.verifyAudit({});
    expect(verified.ok).toBe(true);
    expect(JSON.stringify(verified)).toContain('quotaplane:plane');
  });

  it('the HTTP client verifies the reserved chains as the plane does with a key of every tenant, and skips them with a key of one', async () => {
    const client = (secret: string) => createClient({ url: 'http://quotaplane.test/', key: secret, fetch: injectFetch(fixture.app) });
    const local = await fixture.plane.verifyAudit({});
    expect(local.tenants.map((tenant) => tenant.tenant)).toEqual(expect.arrayContaining(['quotaplane:keys', 'quotaplane:plane']));
    const everyTenant = await client(fixture.key.opAll.secret).verifyAudit();
    expect([...everyTenant.tenants].sort((a, b) => a.tenant.localeCompare(b.tenant))).toEqual([...local.tenants].sort((a, b) => a.tenant.localeCompare(b.tenant)));
    expect(await client(fixture.key.opAcme.secret).verifyAudit()).toEqual(await fixture.plane.verifyAudit({ tenant: 'acme' }));
  });

  it('HTTP answers 400 INVALID_ARGUMENT naming tenant for a quota, a halt, an admission and a key under a reserved name', async () => {
    const { app } = fixture;
    const headers = bearer(fixture.key.opAll);
    const quota = await app.inject({ method: 'PUT', url: '/v1/tenants/quotaplane:plane/quota', headers, payload: { period: 'monthly', maxConcurrentRuns: 3 } });
    expect(expectProblem(quota, 400, 'INVALID_ARGUMENT').field).toBe('tenant');
    const halt = await app.inject({ method: 'POST', url: '/v1/tenants/quotaplane:plane/halts', headers, payload: { scope: 'tenant', reason: 'test' } });
    expect(expectProblem(halt, 400, 'INVALID_ARGUMENT').field).toBe('tenant');
    const admit = await app.inject({ method: 'POST', url: '/v1/runs', headers, payload: { tenant: 'quotaplane:keys', run: 'r9' } });
    const problem = expectProblem(admit, 400, 'INVALID_ARGUMENT');
    expect(problem.field).toBe('tenant');
    expect(String(problem.detail)).toContain("reserved for quotaplane's own audit chains");
    const key = await app.inject({ method: 'POST', url: '/v1/keys', headers, payload: { tenant: 'quotaplane:keys', role: 'operator', name: 'sneaky' } });
    expect(expectProblem(key, 400, 'INVALID_ARGUMENT').field).toBe('tenant');
    expect(await fixture.plane.tenants()).toEqual(['acme', 'globex']);
    const audit = await app.inject({ method: 'GET', url: '/v1/tenants/quotaplane:plane/audit', headers });
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.body).toContain('plane.set');
  });
});

describe('reserved tenant names on the CLI', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  it('quota set and halt on quotaplane:plane are refused naming tenant (exit 2); audit --tenant quotaplane:plane still reads the chain', async () => {
    const dir = temporaryDirectory();
    cleanups.push(() => dir.remove());
    const url = `sqlite:${join(dir.path, 'q.db')}`;
    const store = await openStore(url);
    await createPlane({ store }).setPlaneCeiling({ maxConcurrentRuns: 4 }, { actor: 'ops', basis: 'asserted' });
    await store.close();
    const quota = await runCli(['quota', 'set', '--tenant', 'quotaplane:plane', '--max-concurrent-runs', '3', '--store', url, '--actor', 'ops']);
    expect(quota.status).toBe(2);
    expect(quota.stderr).toContain("tenant: 'quotaplane:plane' begins with 'quotaplane:'");
    const halt = await runCli(['halt', 'tenant', '--tenant', 'quotaplane:plane', '--reason', 'test', '--store', url, '--actor', 'ops']);
    expect(halt.status).toBe(2);
    expect(halt.stderr).toContain("reserved for quotaplane's own audit chains");
    const audit = await runCli(['audit', '--tenant', 'quotaplane:plane', '--store', url, '--json']);
    expect(audit.status).toBe(0);
    expect(audit.stdout).toContain('plane.set');
    expect(audit.stdout).not.toContain('quota.set');
    const status = await runCli(['status', '--store', url, '--json']);
    expect(status.stdout).not.toContain('"tenant":"quotaplane:');
    const one = await runCli(['status', '--tenant', 'quotaplane:plane', '--store', url]);
    expect(one.status).toBe(1);
    expect(one.stderr).toContain("'quotaplane:plane' is one of quotaplane's own audit chains, no tenant");
  });
});
