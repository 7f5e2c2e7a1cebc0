import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { KEYS_AUDIT_TENANT } from '../../src/core/identifiers.js';
import { LAST_USED_GRANULARITY_MS } from '../../src/store/api-keys.js';
import { bearer, expectProblem, serviceFixture, T0, type ServiceFixture } from './http-fixtures.js';

// Key expiry, rotation with an overlap, and the coarse lastUsedAtMs, over HTTP
// (docs/guides/operating.md#api-keys).

let fixture: ServiceFixture;
beforeEach(async () => {
  fixture = await serviceFixture();
});
afterEach(async () => fixture.close());

const settled = () => new Promise<void>((resolve) => setTimeout(resolve, 20));

async function createKey(body: Record<string, unknown>) {
  const created = await fixture.app.inject({ method: 'POST', url: '/v1/keys', headers: bearer(fixture.key.opAll), payload: body });
  expect(created.statusCode, created.body).toBe(201);
  return created.json<{ id: string; key: string; expiresAtMs: number | null }>();
}

describe('API key expiry', () => {
  it('a key made with expiresInMs is accepted until then, and refused after with 401 saying it expired and when', async () => {
    const made = await createKey({ tenant: 'acme', role: 'runner', name: 'short-lived', expiresInMs: 60_000 });
    expect(made.expiresAtMs).toBe(T0 + 60_000);
    expect((await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(made.key) })).statusCode).toBe(200);
    fixture.clock.set(T0 + 60_000);
    const refused = expectProblem(await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(made.key) }), 401, 'UNAUTHENTICATED');
    expect(refused.detail).toContain(`${made.id} expired at ${new Date(T0 + 60_000).toISOString()}`);
  });

  it('a key made without expiresInMs never expires, and an expiry out of bounds is a 400 naming it', async () => {
    const made = await createKey({ tenant: 'acme', role: 'runner' });
    expect(made.expiresAtMs).toBeNull();
    fixture.clock.set(T0 + 10 * 365 * 86_400_000);
    expect((await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(made.key) })).statusCode).toBe(200);
    const bad = await fixture.app.inject({ method: 'POST', url: '/v1/keys', headers: bearer(fixture.key.opAll), payload: { tenant: 'acme', role: 'runner', expiresInMs: 0 } });
    expect(expectProblem(bad, 400, 'INVALID_ARGUMENT').detail).toContain('expiresInMs');
  });
});

describe('API key rotation', () => {
  it('makes a new key with the same name, role and tenant; the old one works through the overlap, then is refused; both audited', async () => {
    const old = await createKey({ tenant: 'acme', role: 'runner', name: 'worker', expiresInMs: 86_400_000 });
    fixture.clock.set(T0 + 1_000);
    const rotated = await fixture.app.inject({ method: 'POST', url: `/v1/keys/${old.id}/rotate`, headers: bearer(fixture.key.opAll), payload: { overlapMs: 60_000 } });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const body = rotated.json<{ created: { id: string; key: string; name: string; role: string; tenant: string; expiresAtMs: number }; old: { id: string; expiresAtMs: number } }>();
    expect(body.created).toMatchObject({ name: 'worker', role: 'runner', tenant: 'acme', expiresAtMs: T0 + 1_000 + 86_400_000 });
    expect(body.old).toEqual({ id: old.id, expiresAtMs: T0 + 61_000 });
    expect((await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(old.key) })).statusCode).toBe(200);
    expect((await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(body.created.key) })).statusCode).toBe(200);
    fixture.clock.set(T0 + 61_000);
    expectProblem(await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(old.key) }), 401, 'UNAUTHENTICATED');
    expect((await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(body.created.key) })).statusCode).toBe(200);
    const rows = await fixture.store.tenant('acme').auditLog({ limit: 10 });
    expect(rows.filter((row) => row.action.startsWith('key.')).map((row) => [row.action, row.subject, row.by])).toEqual(
      expect.arrayContaining([
        ['key.rotate', old.id, { actor: 'ops-all', basis: 'authenticated' }],
        ['key.create', body.created.id, { actor: 'ops-all', basis: 'authenticated' }],
      ]),
    );
  });

  it('refuses to rotate a revoked key, a key the caller does not cover, and answers a runner key 404', async () => {
    const revoked = fixture.key.revoked.record.id;
    expectProblem(await fixture.app.inject({ method: 'POST', url: `/v1/keys/${revoked}/rotate`, headers: bearer(fixture.key.opAll), payload: { overlapMs: 0 } }), 404, 'NOT_FOUND');
    const globex = fixture.key.runGlobex.record.id;
    expectProblem(await fixture.app.inject({ method: 'POST', url: `/v1/keys/${globex}/rotate`, headers: bearer(fixture.key.opAcme), payload: { overlapMs: 0 } }), 404, 'NOT_FOUND');
    expectProblem(
      await fixture.app.inject({ method: 'POST', url: `/v1/keys/${fixture.key.runAcme.record.id}/rotate`, headers: bearer(fixture.key.runAcme), payload: { overlapMs: 0 } }),
      404,
      'NOT_FOUND',
    );
    const audit = await fixture.store.tenant(KEYS_AUDIT_TENANT).auditLog({ limit: 10 });
    expect(audit.filter((row) => row.action === 'key.rotate')).toEqual([]);
  });
});

describe('API key last use', () => {
  it('is recorded off the request, at most once a minute per key, and listed', async () => {
    const id = fixture.key.runAcme.record.id;
    const lastUsed = async () => (await fixture.keys.list()).find((key) => key.id === id)?.lastUsedAtMs;
    expect(await lastUsed()).toBeNull();
    await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(fixture.key.runAcme) });
    await settled();
    expect(await lastUsed()).toBe(T0);
    fixture.clock.set(T0 + LAST_USED_GRANULARITY_MS - 1);
    await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(fixture.key.runAcme) });
    await settled();
    expect(await lastUsed()).toBe(T0);
    fixture.clock.set(T0 + LAST_USED_GRANULARITY_MS);
    await fixture.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(fixture.key.runAcme) });
    await settled();
    expect(await lastUsed()).toBe(T0 + LAST_USED_GRANULARITY_MS);
    const listed = await fixture.app.inject({ method: 'GET', url: '/v1/keys', headers: bearer(fixture.key.opAll) });
    expect(listed.json<{ keys: { id: string; lastUsedAtMs: number | null }[] }>().keys.find((key) => key.id === id)?.lastUsedAtMs).toBe(T0 + LAST_USED_GRANULARITY_MS);
  });

  it('a store that fails to record a use does not fail the request', async () => {
    const failing = await serviceFixture();
    try {
      failing.keys.recordUse = async () => {
        throw new Error('disk full');
      };
      const answer = await failing.app.inject({ method: 'GET', url: '/v1/key', headers: bearer(failing.key.runAcme) });
      expect(answer.statusCode).toBe(200);
      await settled();
    } finally {
      await failing.close();
    }
  });
});
