import { describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { hashApiKey, mintApiKey } from '../../src/http/api-key-secret.js';
import type { ApiKeyStore } from '../../src/store/api-keys.js';

const T0 = 1_767_600_000_000;

/**
 * Expiry, rotation's `expire` and `recordUse` of an {@link ApiKeyStore} (schema version 3), the
 * same on every backend: run by test/http/memory-api-keys.test.ts, test/sqlite/sqlite-api-keys.test.ts
 * and test/postgres/postgres-api-keys.test.ts. `keys` answers a store with no key of these tests' ids.
 */
export function describeApiKeyLifecycle(backend: string, keys: () => ApiKeyStore): void {
  describe(`${backend} API keys: expiry and last use`, () => {
    it('keeps an expiry given at creation, and none when none is given', async () => {
      const lasting = mintApiKey({ role: 'runner', tenant: 'acme', atMs: T0 });
      const expiring = mintApiKey({ role: 'runner', tenant: 'acme', atMs: T0 + 1 });
      await keys().create(lasting.key);
      await keys().create({ ...expiring.key, expiresAtMs: T0 + 60_000 });
      expect(await keys().findByHash(hashApiKey(lasting.secret))).toMatchObject({ expiresAtMs: null, lastUsedAtMs: null });
      expect(await keys().findByHash(hashApiKey(expiring.secret))).toMatchObject({ expiresAtMs: T0 + 60_000, lastUsedAtMs: null });
    });

    it('refuses an expiry not after the creation instant, naming expiresAtMs', async () => {
      const { key } = mintApiKey({ role: 'runner', tenant: 'acme', atMs: T0 });
      const error = await keys().create({ ...key, expiresAtMs: T0 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(QuotaError);
      expect((error as QuotaError).details).toMatchObject({ field: 'expiresAtMs' });
    });

    it('expire brings an expiry forward, never later; a revoked key is left alone; an unknown one is not-found', async () => {
      const { key } = mintApiKey({ role: 'operator', tenant: '*', atMs: T0 });
      await keys().create(key);
      expect(await keys().expire(key.id, T0 + 10_000)).toBe('expiring');
      expect(await keys().expire(key.id, T0 + 20_000)).toBe('expiring');
      expect((await keys().findByHash(key.hash))?.expiresAtMs).toBe(T0 + 10_000);
      await keys().revoke(key.id, T0 + 1);
      expect(await keys().expire(key.id, T0 + 5_000)).toBe('revoked');
      expect((await keys().findByHash(key.hash))?.expiresAtMs).toBe(T0 + 10_000);
      expect(await keys().expire(mintApiKey({ role: 'runner', tenant: 'acme', atMs: T0 }).key.id, T0)).toBe('not-found');
    });

    it('a session answers its key while it lasts, ends on endSession, and ended ones go when a new one is made', async () => {
      const { key } = mintApiKey({ role: 'operator', tenant: '*', name: 'ops-session', atMs: T0 });
      await keys().create(key);
      const hash = hashApiKey('qps_one');
      await keys().createSession({ hash, keyId: key.id, createdAtMs: T0, expiresAtMs: T0 + 1_000 });
      expect(await keys().findSession(hash, T0 + 999)).toMatchObject({ id: key.id, name: 'ops-session' });
      expect(await keys().findSession(hash, T0 + 1_000)).toBeNull();
      expect(await keys().findSession(hashApiKey('qps_other'), T0)).toBeNull();
      const second = hashApiKey('qps_two');
      await keys().createSession({ hash: second, keyId: key.id, createdAtMs: T0 + 2_000, expiresAtMs: T0 + 9_000 });
      expect(await keys().endSession(hash)).toBe(false);
      expect(await keys().endSession(second)).toBe(true);
      expect(await keys().findSession(second, T0 + 2_001)).toBeNull();
      const error = await keys().createSession({ hash, keyId: key.id, createdAtMs: T0, expiresAtMs: T0 }).catch((caught: unknown) => caught);
      expect((error as QuotaError).details).toMatchObject({ field: 'expiresAtMs' });
    });

    it('recordUse moves lastUsedAtMs forward only, takes a batch in one call, and ignores unknown ids', async () => {
      const a = mintApiKey({ role: 'runner', tenant: 'acme', atMs: T0 });
      const b = mintApiKey({ role: 'runner', tenant: 'acme', atMs: T0 + 1 });
      await keys().create(a.key);
      await keys().create(b.key);
      const unknown = mintApiKey({ role: 'runner', tenant: 'acme', atMs: T0 }).key.id;
      await keys().recordUse([
        { id: a.key.id, atMs: T0 + 500 },
        { id: b.key.id, atMs: T0 + 700 },
        { id: unknown, atMs: T0 + 1 },
      ]);
      await keys().recordUse([{ id: a.key.id, atMs: T0 + 100 }]);
      await keys().recordUse([]);
      const listed = new Map((await keys().list()).map((key) => [key.id, key.lastUsedAtMs]));
      expect([listed.get(a.key.id), listed.get(b.key.id)]).toEqual([T0 + 500, T0 + 700]);
      const error = await keys().recordUse([{ id: 'nope', atMs: 1 }]).catch((caught: unknown) => caught);
      expect((error as QuotaError).details).toMatchObject({ field: 'id' });
    });
  });
}
