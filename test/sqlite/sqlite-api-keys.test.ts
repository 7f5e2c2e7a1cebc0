import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { hashApiKey, mintApiKey } from '../../src/http/api-key-secret.js';
import type { ApiKeyStore } from '../../src/store/api-keys.js';
import { openSqliteStore, type SqliteQuotaStore } from '../../src/store/sqlite/sqlite-store.js';
import { compiledEntry } from '../compiled-entry.js';
import { tempDir } from '../plane/plane-fixtures.js';
import { describeApiKeyLifecycle } from '../store/api-key-lifecycle.js';

const T0 = 1_767_600_000_000;

async function caught(promise: Promise<unknown>): Promise<QuotaError> {
  const error = await promise.then(
    () => new Error('expected a QuotaError'),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(QuotaError);
  return error as QuotaError;
}

describe('SQLite API keys, expiry and last use', () => {
  let dir: { dir: string; remove: () => void };
  let store: SqliteQuotaStore;
  beforeEach(async () => {
    dir = tempDir();
    store = await openSqliteStore(`${dir.dir}/quota.db`);
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });
  describeApiKeyLifecycle('SQLite', () => store.apiKeys());
});

describe('SQLite API keys', () => {
  let dir: { dir: string; remove: () => void };
  let store: SqliteQuotaStore;
  let keys: ApiKeyStore;

  beforeEach(async () => {
    dir = tempDir();
    store = await openSqliteStore(`${dir.dir}/quota.db`);
    keys = store.apiKeys();
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  it('stores only the hash: the secret never reaches the file, and the key is found by the hash of its secret', async () => {
    const { secret, key } = mintApiKey({ role: 'runner', tenant: 'acme', name: 'acme-runner', atMs: T0 });
    await keys.create(key);
    expect(await keys.findByHash(hashApiKey(secret))).toEqual({
      id: key.id,
      name: 'acme-runner',
      role: 'runner',
      tenant: 'acme',
      createdAtMs: T0,
      revokedAtMs: null,
      expiresAtMs: null,
      lastUsedAtMs: null,
    });
    expect(await keys.findByHash(hashApiKey(`${secret}x`))).toBeNull();
    await store.close();
    const raw = new Database(`${dir.dir}/quota.db`, { readonly: true });
    const dump = JSON.stringify(raw.prepare('SELECT * FROM quotaplane_api_keys').all());
    raw.close();
    expect(dump).not.toContain(secret);
    expect(dump).toContain(key.hash);
    store = await openSqliteStore(`${dir.dir}/quota.db`);
  });

  it('a key secret is qp_ and 32 random bytes in base64url, and two keys never share one', () => {
    const a = mintApiKey({ role: 'operator', tenant: '*', atMs: T0 });
    const b = mintApiKey({ role: 'operator', tenant: '*', atMs: T0 });
    expect(a.secret).toMatch(/^qp_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.secret.slice(3), 'base64url')).toHaveLength(32);
    expect(a.secret).not.toBe(b.secret);
    expect(a.key.id).toMatch(/^key_[0-9A-Z]{26}$/);
    expect(a.key.name).toBe(a.key.id);
  });

  it('lists every key oldest first, revoked ones included, and revoke is idempotent', async () => {
    const first = mintApiKey({ role: 'operator', tenant: '*', name: 'ops', atMs: T0 });
    const second = mintApiKey({ role: 'runner', tenant: 'globex', atMs: T0 + 1 });
    await keys.create(first.key);
    await keys.create(second.key);
    expect(await keys.revoke(second.key.id, T0 + 5)).toBe('revoked');
    expect(await keys.revoke(second.key.id, T0 + 9)).toBe('already-revoked');
    expect(await keys.revoke('key_01JB0000000000000000000000', T0)).toBe('not-found');
    const listed = await keys.list();
    expect(listed.map((key) => [key.id, key.revokedAtMs])).toEqual([
      [first.key.id, null],
      [second.key.id, T0 + 5],
    ]);
    expect((await keys.findByHash(second.key.hash))?.revokedAtMs).toBe(T0 + 5);
  });

  it('refuses a runner key for every tenant, a malformed key, and a second key with the same id', async () => {
    const runnerForAll = mintApiKey({ role: 'runner', tenant: '*', atMs: T0 });
    const refused = await caught(keys.create(runnerForAll.key));
    expect(refused.code).toBe('INVALID_ARGUMENT');
    expect(refused.details.field).toBe('tenant');

    const bad = mintApiKey({ role: 'operator', tenant: 'acme', atMs: T0 });
    expect((await caught(keys.create({ ...bad.key, hash: 'not-a-hash' }))).details.field).toBe('hash');
    expect((await caught(keys.create({ ...bad.key, role: 'admin' as never }))).details.field).toBe('role');

    await keys.create(bad.key);
    const again = mintApiKey({ role: 'operator', tenant: 'acme', atMs: T0 });
    expect((await caught(keys.create({ ...again.key, id: bad.key.id }))).code).toBe('CONFLICT');
    expect(await keys.list()).toHaveLength(1);
  });

  it('createFirst stores a key only into an empty table, counting revoked keys as keys', async () => {
    const first = mintApiKey({ role: 'operator', tenant: '*', atMs: T0 });
    expect(await keys.createFirst(first.key)).toBe(true);
    expect(await keys.createFirst(mintApiKey({ role: 'operator', tenant: '*', atMs: T0 }).key)).toBe(false);
    await keys.revoke(first.key.id, T0 + 1);
    expect(await keys.createFirst(mintApiKey({ role: 'operator', tenant: '*', atMs: T0 }).key)).toBe(false);
    expect(await keys.list()).toHaveLength(1);
  });

  it('a closed store refuses with STORE_UNAVAILABLE', async () => {
    await store.close();
    expect((await caught(keys.list())).code).toBe('STORE_UNAVAILABLE');
    expect(() => store.apiKeys()).toThrow(QuotaError);
    store = await openSqliteStore(`${dir.dir}/quota.db`);
  });
});

describe('SQLite API keys: the first key across processes', () => {
  it('four processes starting on one empty file create exactly one first key between them', async () => {
    const dir = tempDir();
    const url = `sqlite:${dir.dir}/race.db`;
    try {
      // Create and migrate the file first, so the race is about the key, not the schema.
      await (await openSqliteStore(`${dir.dir}/race.db`)).close();
      const worker = fileURLToPath(new URL('./sqlite-first-key-worker.ts', import.meta.url));
      const compiled = await compiledEntry(worker);
      const children = Array.from({ length: 4 }, () => fork(compiled, [url], { execArgv: [], stdio: 'inherit' }));
      const answers = children.map(
        (child) =>
          new Promise<{ created?: boolean; error?: string }>((resolve, reject) => {
            child.on('message', (message) => {
              if (message !== 'ready') resolve(message as { created?: boolean; error?: string });
            });
            child.once('exit', (code) => reject(new Error(`racer exited with ${code} without an answer`)));
          }),
      );
      await Promise.all(
        children.map((child) => new Promise<void>((resolve) => child.once('message', (message) => message === 'ready' && resolve()))),
      );
      for (const child of children) child.send('go');
      const results = await Promise.all(answers);
      expect(results.map((result) => result.error)).toEqual([undefined, undefined, undefined, undefined]);
      expect(results.filter((result) => result.created === true)).toHaveLength(1);
      const store = await openSqliteStore(`${dir.dir}/race.db`);
      expect(await store.apiKeys().list()).toHaveLength(1);
      await store.close();
    } finally {
      dir.remove();
    }
  }, 60_000);
});
