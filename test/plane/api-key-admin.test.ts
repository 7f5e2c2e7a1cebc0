import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Operator } from '../../src/core/operator.js';
import { mintApiKey } from '../../src/http/api-key-secret.js';
import { KEYS_AUDIT_TENANT } from '../../src/core/identifiers.js';
import { storeApiKeyAdmin, type ApiKeyAdmin } from '../../src/plane/api-key-admin.js';
import type { ApiKeyRole, ApiKeyStore } from '../../src/store/api-keys.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ALICE, failure, T0 } from './plane-fixtures.js';

// storeApiKeyAdmin over a SQLite store in this process: who may do what, the
// audit row written before each change, and store faults. The CLI and HTTP suites drive it through
// commands and routes; `npm run mutate` runs neither, so these reach it there.

let store: QuotaStore;
let keys: ApiKeyStore;
let nowMs: number;
let minted: { role: ApiKeyRole; tenant: string; name?: string | undefined; atMs: number }[];

beforeEach(async () => {
  store = await openStore('sqlite::memory:');
  const found = store.apiKeys?.();
  if (found === undefined) throw new Error('the SQLite store keeps no API keys');
  keys = found;
  nowMs = T0;
  minted = [];
});
afterEach(async () => {
  await store.close();
});

function admin(options: { by?: Operator | null; covers?: (tenant: string) => boolean; keys?: ApiKeyStore; store?: QuotaStore } = {}): ApiKeyAdmin {
  return storeApiKeyAdmin({
    store: options.store ?? store,
    keys: options.keys ?? keys,
    by: options.by === undefined ? ALICE : options.by,
    mint: (input) => {
      minted.push(input);
      return mintApiKey(input);
    },
    nowMs: () => nowMs,
    covers: options.covers,
  });
}

const auditOf = (tenant: string) => store.tenant(tenant).auditLog({ limit: 100 });

describe('storeApiKeyAdmin.create', () => {
  it('mints the key at the clock, audits key.create in the key tenant’s chain first, stores it and answers the secret once', async () => {
    const created = await admin().create({ tenant: 'acme', role: 'runner', name: 'ci-runner', newTenant: true });
    expect(minted).toEqual([{ role: 'runner', tenant: 'acme', name: 'ci-runner', atMs: T0 }]);
    expect(created).toEqual({
      id: expect.stringMatching(/^key_[0-9A-Z]{26}$/),
      name: 'ci-runner',
      role: 'runner',
      tenant: 'acme',
      createdAtMs: T0,
      revokedAtMs: null,
      expiresAtMs: null,
      lastUsedAtMs: null,
      key: expect.stringMatching(/^qp_/),
    });
    expect(created).not.toHaveProperty('hash');
    const { key: _secret, ...record } = created;
    expect(await keys.list()).toEqual([record]);

    const rows = await auditOf('acme');
    expect(rows.map(({ atMs, by, action, subject, detail }) => ({ atMs, by, action, subject, detail }))).toEqual([
      { atMs: T0, by: ALICE, action: 'key.create', subject: created.id, detail: { name: 'ci-runner', role: 'runner', tenant: 'acme' } },
    ]);
    expect(await auditOf(KEYS_AUDIT_TENANT)).toEqual([]);
  });

  it('audits a key for every tenant in the quotaplane:keys chain', async () => {
    const created = await admin().create({ tenant: '*', role: 'operator' });
    expect(created.name).toBe(created.id);
    const rows = await auditOf(KEYS_AUDIT_TENANT);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ action: 'key.create', subject: created.id, detail: { name: created.id, role: 'operator', tenant: '*' } });
    expect(KEYS_AUDIT_TENANT).toBe('quotaplane:keys');
  });

  it('refuses without an operator, for a tenant the caller does not cover, and a key the store would refuse; nothing is written', async () => {
    const noOperator = await failure(admin({ by: null }).create({ tenant: 'acme', role: 'runner' }));
    expect(noOperator.code).toBe('INVALID_ARGUMENT');
    expect(noOperator.details.field).toBe('by');
    expect(noOperator.message).toContain('keys create');

    const onlyAcme = (tenant: string) => tenant === 'acme';
    const uncovered = await failure(admin({ covers: onlyAcme }).create({ tenant: 'globex', role: 'operator' }));
    expect(uncovered.details.field).toBe('tenant');
    expect(uncovered.message).toContain("'globex'");

    const runnerForAll = await failure(admin().create({ tenant: '*', role: 'runner' }));
    expect(runnerForAll.details.field).toBe('tenant');

    expect(await keys.list()).toEqual([]);
    expect(await auditOf('acme')).toEqual([]);
    expect(await auditOf('globex')).toEqual([]);
    expect(await auditOf(KEYS_AUDIT_TENANT)).toEqual([]);
    // A covered tenant is allowed through the same filter.
    expect((await admin({ covers: onlyAcme }).create({ tenant: 'acme', role: 'operator', newTenant: true })).tenant).toBe('acme');
  });

  it('writes the audit row before the key: an audit fault stores no key, a key fault leaves the row', async () => {
    const failingAudit: QuotaStore = { ...store, tenant: () => ({ appendAudit: async () => Promise.reject(new Error('disk gone')) }) as never };
    const auditFault = await failure(admin({ store: failingAudit }).create({ tenant: 'acme', role: 'runner', newTenant: true }));
    expect(auditFault.code).toBe('STORE_UNAVAILABLE');
    expect(auditFault.details).toEqual({ operation: 'appendAudit' });
    expect(await keys.list()).toEqual([]);

    const failingKeys: ApiKeyStore = { ...keys, create: async () => Promise.reject(new Error('disk gone')) };
    const keyFault = await failure(admin({ keys: failingKeys }).create({ tenant: 'acme', role: 'runner', newTenant: true }));
    expect(keyFault.code).toBe('STORE_UNAVAILABLE');
    expect(keyFault.details).toEqual({ operation: 'createKey' });
    expect(await keys.list()).toEqual([]);
    expect((await auditOf('acme')).map((row) => row.action)).toEqual(['key.create']);
  });
});

describe('storeApiKeyAdmin.list', () => {
  it('answers the keys the caller covers, revoked ones included, oldest first, never a hash', async () => {
    const a = await admin().create({ tenant: 'acme', role: 'runner', newTenant: true });
    nowMs += 1000;
    const g = await admin().create({ tenant: 'globex', role: 'runner', newTenant: true });
    nowMs += 1000;
    const all = await admin().create({ tenant: '*', role: 'operator' });
    await admin().revoke(a.id);

    const everyId = (await admin().list()).map((key) => key.id);
    expect(everyId).toEqual([a.id, g.id, all.id]);
    const acmeOnly = await admin({ by: null, covers: (tenant) => tenant === 'acme' }).list();
    expect(acmeOnly).toEqual([{ id: a.id, name: a.name, role: 'runner', tenant: 'acme', createdAtMs: T0, revokedAtMs: T0 + 2000, expiresAtMs: null, lastUsedAtMs: null }]);

    const failingKeys: ApiKeyStore = { ...keys, list: async () => Promise.reject(new Error('disk gone')) };
    expect((await failure(admin({ keys: failingKeys }).list())).details).toEqual({ operation: 'listKeys' });
  });
});

describe('storeApiKeyAdmin.revoke', () => {
  it('revokes a usable key at the clock after auditing key.revoke; answers already-revoked and not-found without a row', async () => {
    const created = await admin().create({ tenant: 'acme', role: 'operator', name: 'ops', newTenant: true });
    nowMs = T0 + 5000;
    expect(await admin({ by: { actor: 'ops-bob', basis: 'authenticated' } }).revoke(created.id)).toEqual({ id: created.id, outcome: 'revoked' });
    expect((await keys.list())[0]?.revokedAtMs).toBe(T0 + 5000);
    const [row] = await auditOf('acme');
    expect(row).toMatchObject({
      atMs: T0 + 5000,
      by: { actor: 'ops-bob', basis: 'authenticated' },
      action: 'key.revoke',
      subject: created.id,
      detail: { name: 'ops', role: 'operator', tenant: 'acme' },
    });

    nowMs = T0 + 9000;
    expect(await admin().revoke(created.id)).toEqual({ id: created.id, outcome: 'already-revoked' });
    expect((await keys.list())[0]?.revokedAtMs).toBe(T0 + 5000);
    expect(await admin().revoke('key_01ARZ3NDEKTSV4RRFFQ69G5FAV')).toEqual({ id: 'key_01ARZ3NDEKTSV4RRFFQ69G5FAV', outcome: 'not-found' });
    expect((await auditOf('acme')).map((audit) => audit.action)).toEqual(['key.revoke', 'key.create']);
  });

  it('answers not-found for a key the caller does not cover, and leaves it usable', async () => {
    const other = await admin().create({ tenant: 'globex', role: 'runner', newTenant: true });
    expect(await admin({ covers: (tenant) => tenant === 'acme' }).revoke(other.id)).toEqual({ id: other.id, outcome: 'not-found' });
    expect((await keys.list())[0]?.revokedAtMs).toBeNull();
    expect(await auditOf('globex')).toHaveLength(1);
  });

  it('audits a key for every tenant in the quotaplane:keys chain', async () => {
    const all = await admin().create({ tenant: '*', role: 'operator' });
    await admin().revoke(all.id);
    expect((await auditOf(KEYS_AUDIT_TENANT)).map((row) => [row.action, row.subject])).toEqual([
      ['key.revoke', all.id],
      ['key.create', all.id],
    ]);
  });

  it('refuses without an operator, and lets a store fault through naming the call', async () => {
    const created = await admin().create({ tenant: 'acme', role: 'runner', newTenant: true });
    const noOperator = await failure(admin({ by: null }).revoke(created.id));
    expect(noOperator.details.field).toBe('by');
    expect(noOperator.message).toContain('keys revoke');

    const failingRevoke: ApiKeyStore = { ...keys, list: () => keys.list(), revoke: async () => Promise.reject(new Error('disk gone')) };
    expect((await failure(admin({ keys: failingRevoke }).revoke(created.id))).details).toEqual({ operation: 'revokeKey' });
    const failingList: ApiKeyStore = { ...keys, list: async () => Promise.reject(new Error('disk gone')) };
    expect((await failure(admin({ keys: failingList }).revoke(created.id))).details).toEqual({ operation: 'listKeys' });
    expect((await keys.list())[0]?.revokedAtMs).toBeNull();
  });
});

describe('storeApiKeyAdmin expiry and rotate', () => {
  it('create with expiresInMs sets the expiry from the clock and audits it; an expiry of 0 is refused naming expiresInMs', async () => {
    const created = await admin().create({ tenant: 'acme', role: 'runner', newTenant: true, expiresInMs: 60_000 });
    expect(created.expiresAtMs).toBe(T0 + 60_000);
    expect((await auditOf('acme'))[0]?.detail).toEqual({ name: created.name, role: 'runner', tenant: 'acme', expiresAtMs: T0 + 60_000 });
    expect((await failure(admin().create({ tenant: 'acme', role: 'runner', expiresInMs: 0 }))).details).toMatchObject({ field: 'expiresInMs' });
  });

  it('rotate makes a key with the same name, role, tenant and lifetime, ends the old one after the overlap, and audits key.rotate then key.create', async () => {
    const old = await admin().create({ tenant: 'acme', role: 'runner', name: 'worker', newTenant: true, expiresInMs: 86_400_000 });
    nowMs = T0 + 1_000;
    const rotated = await admin().rotate(old.id, { overlapMs: 60_000 });
    expect(rotated.created).toMatchObject({ name: 'worker', role: 'runner', tenant: 'acme', createdAtMs: T0 + 1_000, expiresAtMs: T0 + 1_000 + 86_400_000 });
    expect(rotated.old).toEqual({ id: old.id, expiresAtMs: T0 + 61_000 });
    expect((await keys.list()).find((key) => key.id === old.id)?.expiresAtMs).toBe(T0 + 61_000);
    const rows = await auditOf('acme');
    // Newest first: the rotate row, then the new key's create row after it.
    expect(rows.slice(0, 2).reverse().map(({ action, subject, detail }) => [action, subject, detail])).toEqual([
      ['key.rotate', old.id, { name: 'worker', role: 'runner', tenant: 'acme', rotatedTo: rotated.created.id, expiresAtMs: T0 + 61_000 }],
      ['key.create', rotated.created.id, { name: 'worker', role: 'runner', tenant: 'acme', rotatedFrom: old.id, expiresAtMs: T0 + 1_000 + 86_400_000 }],
    ]);
  });

  it('an overlap never lengthens the old key, and a key without expiry makes one without unless expiresInMs says', async () => {
    const soon = await admin().create({ tenant: 'acme', role: 'runner', newTenant: true, expiresInMs: 10_000 });
    expect((await admin().rotate(soon.id, { overlapMs: 3_600_000 })).old.expiresAtMs).toBe(T0 + 10_000);
    const lasting = await admin().create({ tenant: 'acme', role: 'runner' });
    expect((await admin().rotate(lasting.id, { overlapMs: 0 })).created.expiresAtMs).toBeNull();
    const other = await admin().create({ tenant: 'acme', role: 'runner' });
    expect((await admin().rotate(other.id, { overlapMs: 0, expiresInMs: 5_000 })).created.expiresAtMs).toBe(T0 + 5_000);
  });

  it('refuses a revoked, an expired, an unknown or an uncovered key with NOT_FOUND, and needs an operator; nothing is written', async () => {
    const revoked = await admin().create({ tenant: 'acme', role: 'runner', newTenant: true });
    await admin().revoke(revoked.id);
    const expired = await admin().create({ tenant: 'acme', role: 'runner', expiresInMs: 1 });
    nowMs = T0 + 1;
    const before = (await auditOf('acme')).length;
    expect((await failure(admin().rotate(revoked.id, { overlapMs: 0 }))).code).toBe('NOT_FOUND');
    expect((await failure(admin().rotate(expired.id, { overlapMs: 0 }))).code).toBe('NOT_FOUND');
    expect((await failure(admin().rotate('key_01JB0000000000000000000000', { overlapMs: 0 }))).code).toBe('NOT_FOUND');
    expect((await failure(admin({ covers: (tenant) => tenant === 'globex' }).rotate(expired.id, { overlapMs: 0 }))).code).toBe('NOT_FOUND');
    expect((await failure(admin({ by: null }).rotate(expired.id, { overlapMs: 0 }))).details).toMatchObject({ field: 'by' });
    expect((await failure(admin().rotate(expired.id, { overlapMs: -1 }))).details).toMatchObject({ field: 'overlapMs' });
    expect((await auditOf('acme')).length).toBe(before);
  });
});
