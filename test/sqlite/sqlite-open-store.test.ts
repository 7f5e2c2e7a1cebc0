import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { openStore, STORE_URL_FORMS } from '../../src/store/open-store.js';
import { SqliteQuotaStore } from '../../src/store/sqlite/sqlite-store.js';

describe('openStore with SQLite URLs', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-open-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('opens sqlite::memory: as a private in-memory store', async () => {
    const store = await openStore('sqlite::memory:');
    expect(store).toBeInstanceOf(SqliteQuotaStore);
    expect(store.backend).toBe('sqlite');
    expect((store as SqliteQuotaStore).path).toBe(':memory:');
    await store.tenant('acme').reserve({ run: 'r1', quota: { period: 'monthly' }, atMs: 1 });
    expect(await store.tenant('acme').running()).toBe(1);
    await store.close();

    const other = await openStore('sqlite::memory:');
    expect(await other.tenant('acme').running()).toBe(0);
    await other.close();
  });

  it.each([
    ['sqlite:<path>', (d: string) => `sqlite:${join(d, 'a.db')}`, 'a.db'],
    ['sqlite://<path>', (d: string) => `sqlite://${join(d, 'b.sqlite')}`, 'b.sqlite'],
    ['a bare path ending in .db', (d: string) => join(d, 'c.db'), 'c.db'],
  ])('opens %s as a SQLite file, creating it', async (_form, urlOf, file) => {
    const store = await openStore(urlOf(dir));
    expect(store.backend).toBe('sqlite');
    expect((store as SqliteQuotaStore).path).toBe(join(dir, file));
    expect(existsSync(join(dir, file))).toBe(true);
    await store.close();
  });

  it.each(['mysql://db/quota', 'quota.txt', 'sqlite:', '.db', '', 'https://example.test/a.db'])(
    'refuses %j with INVALID_ARGUMENT on url listing the accepted forms',
    async (url) => {
      const error = await openStore(url).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(QuotaError);
      expect((error as QuotaError).code).toBe('INVALID_ARGUMENT');
      expect((error as QuotaError).details.field).toBe('url');
      for (const form of STORE_URL_FORMS) expect((error as QuotaError).message).toContain(`'${form}'`);
    },
  );

  it('refuses a negative busy timeout naming busyTimeoutMs', async () => {
    const error = await openStore('sqlite::memory:', { busyTimeoutMs: -1 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'busyTimeoutMs' } });
  });
});
