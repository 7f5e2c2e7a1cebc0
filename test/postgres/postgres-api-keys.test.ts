import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { hashApiKey, mintApiKey } from '../../src/http/api-key-secret.js';
import type { ApiKeyStore } from '../../src/store/api-keys.js';
import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';
import { RaceCluster } from './race-cluster.js';
import { describeApiKeyLifecycle } from '../store/api-key-lifecycle.js';

// The API keys of the HTTP service on PostgreSQL (schema version 3): the same behaviour as the
// SQLite adapter, and one first key between servers starting together on one database.

const T0 = 1_767_600_000_000;

let url: string;
let schema: string;
let store: PostgresQuotaStore;
let keys: ApiKeyStore;
let admin: pg.Client;

beforeAll(async () => {
  url = testPgUrl();
  schema = freshSchemaName('api_keys');
  store = await openPostgresStore(url, { schema });
  keys = store.apiKeys();
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await store?.close().catch(() => undefined);
  if (schema !== undefined) await dropSchema(url, schema);
});

async function emptyKeys(): Promise<void> {
  await admin.query(`DELETE FROM "${schema}".quotaplane_api_keys`);
}

async function caught(promise: Promise<unknown>): Promise<QuotaError> {
  const error = await promise.then(
    () => new Error('expected a QuotaError'),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(QuotaError);
  return error as QuotaError;
}

describeApiKeyLifecycle('PostgreSQL', () => keys);

describe('PostgreSQL API keys', () => {
  it('stores only the hash: the secret never reaches the database, and the key is found by the hash of its secret', async () => {
    await emptyKeys();
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
    const dump = JSON.stringify((await admin.query(`SELECT * FROM "${schema}".quotaplane_api_keys`)).rows);
    expect(dump).not.toContain(secret);
    expect(dump).toContain(key.hash);
  });

  it('lists every key oldest first, revoked ones included, and revoke is idempotent', async () => {
    await emptyKeys();
    const first = mintApiKey({ role: 'operator', tenant: '*', name: 'ops', atMs: T0 });
    const second = mintApiKey({ role: 'runner', tenant: 'globex', atMs: T0 + 1 });
    await keys.create(first.key);
    await keys.create(second.key);
    expect(await keys.revoke(second.key.id, T0 + 5)).toBe('revoked');
    expect(await keys.revoke(second.key.id, T0 + 9)).toBe('already-revoked');
    expect(await keys.revoke('key_01JB0000000000000000000000', T0)).toBe('not-found');
    expect((await keys.list()).map((key) => [key.id, key.revokedAtMs])).toEqual([
      [first.key.id, null],
      [second.key.id, T0 + 5],
    ]);
  });

  it('refuses a runner key for every tenant, a malformed key, and a second key with the same id or secret', async () => {
    await emptyKeys();
    const refused = await caught(keys.create(mintApiKey({ role: 'runner', tenant: '*', atMs: T0 }).key));
    expect(refused.details.field).toBe('tenant');
    const bad = mintApiKey({ role: 'operator', tenant: 'acme', atMs: T0 });
    expect((await caught(keys.create({ ...bad.key, hash: 'not-a-hash' }))).details.field).toBe('hash');
    await keys.create(bad.key);
    const again = mintApiKey({ role: 'operator', tenant: 'acme', atMs: T0 });
    expect((await caught(keys.create({ ...again.key, id: bad.key.id }))).code).toBe('CONFLICT');
    expect((await caught(keys.create({ ...again.key, hash: bad.key.hash }))).code).toBe('CONFLICT');
    expect(await keys.list()).toHaveLength(1);
  });

  it('createFirst stores a key only into an empty table, counting revoked keys as keys', async () => {
    await emptyKeys();
    const first = mintApiKey({ role: 'operator', tenant: '*', atMs: T0 });
    expect(await keys.createFirst(first.key)).toBe(true);
    expect(await keys.createFirst(mintApiKey({ role: 'operator', tenant: '*', atMs: T0 }).key)).toBe(false);
    await keys.revoke(first.key.id, T0 + 1);
    expect(await keys.createFirst(mintApiKey({ role: 'operator', tenant: '*', atMs: T0 }).key)).toBe(false);
    expect(await keys.list()).toHaveLength(1);
  });

  it('four processes starting on one empty database create exactly one first key between them (20 repetitions)', async () => {
    const cluster = await RaceCluster.start(4, url, schema);
    try {
      for (let rep = 0; rep < 20; rep += 1) {
        await emptyKeys();
        const ops = [0, 1, 2, 3].map(() => [
          { kind: 'createFirstKey' as const, key: mintApiKey({ role: 'operator', tenant: '*', atMs: T0 }).key },
        ]);
        const results = (await cluster.fire(ops)).flat().sort();
        expect(results, `repetition ${rep}`).toEqual(['created', 'not-created', 'not-created', 'not-created']);
        expect(await keys.list(), `repetition ${rep}`).toHaveLength(1);
      }
    } finally {
      await cluster.close();
    }
  });

  it('a closed store refuses with STORE_UNAVAILABLE', async () => {
    const own = await openPostgresStore(url, { schema });
    const ownKeys = own.apiKeys();
    await own.close();
    expect((await caught(ownKeys.list())).code).toBe('STORE_UNAVAILABLE');
    expect(() => own.apiKeys()).toThrow(QuotaError);
  });
});
