import { describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { hashApiKey, mintApiKey } from '../../src/http/api-key-secret.js';
import { createMemoryApiKeyStore } from '../../src/store/memory-api-keys.js';
import { T0 } from './http-fixtures.js';
import { describeApiKeyLifecycle } from '../store/api-key-lifecycle.js';

describeApiKeyLifecycle('in-memory', (() => {
  const keys = createMemoryApiKeyStore();
  return () => keys;
})());

describe('the in-memory API key store answers as the SQLite one does', () => {
  it('create, find by the hash of the secret, list oldest first, revoke idempotently', async () => {
    const keys = createMemoryApiKeyStore();
    const a = mintApiKey({ role: 'operator', tenant: '*', name: 'ops', atMs: T0 });
    const b = mintApiKey({ role: 'runner', tenant: 'acme', atMs: T0 + 1 });
    await keys.create(b.key);
    await keys.create(a.key);
    expect(await keys.findByHash(hashApiKey(b.secret))).toEqual({ id: b.key.id, name: b.key.id, role: 'runner', tenant: 'acme', createdAtMs: T0 + 1, revokedAtMs: null, expiresAtMs: null, lastUsedAtMs: null });
    expect((await keys.list()).map((key) => key.id)).toEqual([a.key.id, b.key.id]);
    expect(await keys.revoke(b.key.id, T0 + 5)).toBe('revoked');
    expect(await keys.revoke(b.key.id, T0 + 6)).toBe('already-revoked');
    expect(await keys.revoke('key_01JB0000000000000000000000', T0)).toBe('not-found');
    expect((await keys.findByHash(b.key.hash))?.revokedAtMs).toBe(T0 + 5);
  });

  it('createFirst only into an empty store; a clash is CONFLICT; a runner key for every tenant is refused', async () => {
    const keys = createMemoryApiKeyStore();
    const first = mintApiKey({ role: 'operator', tenant: '*', atMs: T0 });
    expect(await keys.createFirst(first.key)).toBe(true);
    expect(await keys.createFirst(mintApiKey({ role: 'operator', tenant: '*', atMs: T0 }).key)).toBe(false);
    const clash = await keys.create(first.key).catch((error: unknown) => error);
    expect((clash as QuotaError).code).toBe('CONFLICT');
    const everyTenant = await keys.create(mintApiKey({ role: 'runner', tenant: '*', atMs: T0 }).key).catch((error: unknown) => error);
    expect((everyTenant as QuotaError).details.field).toBe('tenant');
    expect(await keys.list()).toHaveLength(1);
  });
});
