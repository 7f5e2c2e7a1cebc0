import { existsSync, readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openStore } from '../../src/store/open-store.js';
import { failure } from '../plane/plane-fixtures.js';

const OPS = { actor: 'ops-alice', basis: 'asserted' as const };

describe('SQLite store faults', () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-faults-'));
    path = join(dir, 'quota.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('every call after close() throws STORE_UNAVAILABLE, and close() is idempotent', async () => {
    const store = await openStore(`sqlite:${path}`);
    const acme = store.tenant('acme');
    await store.close();
    await store.close();

    for (const call of [
      () => acme.running(),
      () => acme.halts(),
      () => acme.reserve({ run: 'r1', quota: { period: 'monthly' }, atMs: 1 }),
      () => acme.admit({ run: 'r1', budget: {}, width: 1, atMs: 1, leaseMs: 1 }),
      () => store.tenants(),
    ]) {
      const error = await failure(call());
      expect(error.code).toBe('STORE_UNAVAILABLE');
      expect(error.retryable).toBe(true);
    }
    expect(() => store.tenant('acme')).toThrow(expect.objectContaining({ code: 'STORE_UNAVAILABLE' }));
  });

  it('a write lock held by another process past the busy timeout is STORE_UNAVAILABLE with the driver error as cause', async () => {
    const store = await openStore(`sqlite:${path}`, { busyTimeoutMs: 20 });
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    try {
      const error = await failure(store.tenant('acme').reserve({ run: 'r1', quota: { period: 'monthly', maxConcurrentRuns: 1 }, atMs: 1 }));
      expect(error.code).toBe('STORE_UNAVAILABLE');
      expect((error.cause as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    // Nothing was written by the failed call; the store answers again once the lock is gone.
    expect(await store.tenant('acme').running()).toBe(0);
    await store.close();
  });

  it('a hand-corrupted halt row is STORE_CORRUPT for halts() and admit(), never skipped', async () => {
    const store = await openStore(`sqlite:${path}`);
    const acme = store.tenant('acme');
    await acme.setHalt({ scope: { kind: 'agent', name: 'clerk' }, reason: 'looping', by: OPS, atMs: 1 });
    const raw = new Database(path);
    raw.prepare("UPDATE quota_halted SET scope = 'agentt:clerk' WHERE tenant = 'acme'").run();
    raw.close();

    expect((await failure(acme.halts())).code).toBe('STORE_CORRUPT');
    const refused = await failure(acme.admit({ run: 'r1', budget: {}, width: 1, atMs: 1, leaseMs: 1 }));
    expect(refused.code).toBe('STORE_CORRUPT');
    expect(refused.message).toContain('agentt:clerk');
    expect(await acme.running()).toBe(0);
    // Another tenant's rows are not read, so it is unaffected.
    expect(await store.tenant('globex').halts()).toEqual([]);
    await store.close();
  });

  it('an unreadable stored quota is STORE_CORRUPT for getQuota() and admit()', async () => {
    const store = await openStore(`sqlite:${path}`);
    const raw = new Database(path);
    raw.prepare("INSERT INTO quota_tenants (tenant, quota_json) VALUES ('acme', '{\"maxConcurrentRuns\": -1}')").run();
    raw.close();
    const acme = store.tenant('acme');
    expect((await failure(acme.getQuota())).code).toBe('STORE_CORRUPT');
    expect((await failure(acme.admit({ run: 'r1', budget: {}, width: 1, atMs: 1, leaseMs: 1 }))).code).toBe('STORE_CORRUPT');
    await store.close();
  });

  it('a stored quota with a rate window no longer settable still reads, and setting it again is refused', async () => {
    const store = await openStore(`sqlite:${path}`);
    const raw = new Database(path);
    const quotaJson = JSON.stringify({ period: 'monthly', rateCeilings: { search: [{ count: 10, windowSeconds: 99_999_999 }] } });
    raw.prepare('INSERT INTO quota_tenants (tenant, quota_json) VALUES (?, ?)').run('acme', quotaJson);
    raw.close();
    const acme = store.tenant('acme');
    const stored = await acme.getQuota();
    expect(stored?.rateCeilings).toEqual({ search: [{ count: 10, windowSeconds: 99_999_999 }] });
    expect((await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: 1, leaseMs: 1_000 })).ok).toBe(true);
    const refused = await failure(acme.setQuota(stored!, { atMs: 2, by: { actor: 'ops', basis: 'asserted' }, action: 'quota.set', subject: 'quota', detail: {} }));
    expect(refused.code).toBe('INVALID_ARGUMENT');
    expect(refused.details.field).toBe('quota.rateCeilings["search"][0].windowSeconds');
    await store.close();
  });

  it("tenant('*') is INVALID_ARGUMENT: '*' means every tenant for keys, not a tenant's name", async () => {
    const store = await openStore(`sqlite:${path}`);
    try {
      expect(() => store.tenant('*')).toThrow(/tenant: '\*' means every tenant for API keys and is not a tenant name; name one tenant/);
      expect(await store.tenants()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('a file that is not a SQLite database is STORE_MISCONFIGURED (foreign) on open, and is left as it was', async () => {
    const text = 'this is not a database, just some text long enough to fill a header page '.repeat(20);
    writeFileSync(path, text);
    const error = await failure(openStore(`sqlite:${path}`));
    expect([error.code, error.details.reason]).toEqual(['STORE_MISCONFIGURED', 'foreign']);
    expect(readFileSync(path, 'utf8')).toBe(text);
  });

  it('create: false opens an existing store but answers a missing one with STORE_MISCONFIGURED (no-store) naming it, creating nothing', async () => {
    const missing = await failure(openStore(`sqlite:${path}`, { create: false }));
    expect(missing.code).toBe('STORE_MISCONFIGURED');
    expect(missing.details).toEqual({ reason: 'no-store', where: path });
    expect(missing.message).toMatch(new RegExp(`^no quotaplane store at ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; check --store`));
    expect(missing.retryable).toBe(false);
    expect(existsSync(path)).toBe(false);
    await (await openStore(`sqlite:${path}`)).close();
    await (await openStore(`sqlite:${path}`, { create: false })).close();
    await (await openStore('sqlite::memory:', { create: false })).close();
  });

  it('a file in a missing directory is STORE_MISCONFIGURED (not-writable) on open, naming the directory', async () => {
    const error = await failure(openStore(`sqlite:${join(dir, 'missing', 'quota.db')}`));
    expect([error.code, error.details.reason]).toEqual(['STORE_MISCONFIGURED', 'not-writable']);
    expect(error.message).toContain(join(dir, 'missing'));
  });

  it.each([
    ['tenant', (s: Awaited<ReturnType<typeof openStore>>) => Promise.resolve().then(() => s.tenant(''))],
    ['run', (s: Awaited<ReturnType<typeof openStore>>) => s.tenant('acme').release('bad\nid')],
    ['limit', (s: Awaited<ReturnType<typeof openStore>>) => s.tenant('acme').runningRuns(0)],
    ['period', (s: Awaited<ReturnType<typeof openStore>>) => s.tenant('acme').spent('2026-13')],
    [
      'settlement.epoch',
      (s: Awaited<ReturnType<typeof openStore>>) =>
        s.tenant('acme').settle({ run: 'r', epoch: 0, period: null, spend: { tokens: 0, minorUnits: 0 }, releaseSlot: true, concludes: true }),
    ],
    [
      'hold.amount.tokens',
      (s: Awaited<ReturnType<typeof openStore>>) =>
        s.tenant('acme').reserve({ run: 'r', quota: { period: 'monthly' }, hold: { period: '2026-01', amount: { tokens: -1, minorUnits: 0 } }, atMs: 1 }),
    ],
    [
      'reservation.grant',
      (s: Awaited<ReturnType<typeof openStore>>) =>
        s.tenant('acme').reserveRate({ grant: '', run: 'r', dispatch: 'd', ceilings: [], atMs: 1, exempt: false }),
    ],
    ['width', (s: Awaited<ReturnType<typeof openStore>>) => s.tenant('acme').admit({ run: 'r', budget: {}, width: 1.5, atMs: 1, leaseMs: 1 })],
    ['halt.scope.digest', (s: Awaited<ReturnType<typeof openStore>>) =>
      s.tenant('acme').setHalt({ scope: { kind: 'revision', digest: 'abc' }, reason: 'x', by: OPS, atMs: 1 })],
  ])('refuses a bad %s with INVALID_ARGUMENT naming the field', async (field, call) => {
    const store = await openStore('sqlite::memory:');
    const error = await failure(call(store));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.details.field).toBe(field);
    await store.close();
  });
});
