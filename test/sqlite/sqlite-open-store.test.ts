import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { openStore } from '../../src/store/open-store.js';
import { STORE_URL_FORMS } from '../../src/store/store-url.js';
import { SQLITE_PAGE_SIZE_BYTES, SqliteQuotaStore } from '../../src/store/sqlite/sqlite-store.js';
import { unvalidated } from '../../src/store/validated-store.js';

describe('openStore with SQLite URLs', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-open-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('opens sqlite::memory: as a private in-memory store', async () => {
    const store = await openStore('sqlite::memory:');
    // openStore answers the adapter wrapped in validated() (docs/design/architecture.md "Validation, once").
    expect(unvalidated(store)).toBeInstanceOf(SqliteQuotaStore);
    expect(store.backend).toBe('sqlite');
    expect((unvalidated(store) as SqliteQuotaStore).path).toBe(':memory:');
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
    expect((unvalidated(store) as SqliteQuotaStore).path).toBe(join(dir, file));
    expect(existsSync(join(dir, file))).toBe(true);
    await store.close();
  });

  it.each(['mysql://db/quota', 'quota.txt', 'sqlite:', '.db', '', 'https://example.test/a.db', 'sqllite:./m.db', 'file:quota.db'])(
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

  function pageSizeOf(path: string): number {
    const reader = new Database(path, { readonly: true });
    try {
      return reader.pragma('page_size', { simple: true }) as number;
    } finally {
      reader.close();
    }
  }

  it('creates a store file with SQLITE_PAGE_SIZE_BYTES pages (a commit writes whole pages)', async () => {
    const path = join(dir, 'new.db');
    const store = await openStore(`sqlite:${path}`);
    await store.tenant('acme').reserve({ run: 'r1', quota: { period: 'monthly' }, atMs: 1 });
    await store.close();
    expect(pageSizeOf(path)).toBe(SQLITE_PAGE_SIZE_BYTES);
  });

  it('opens a store file made with another page size as it is, and decides on it', async () => {
    const path = join(dir, 'older.db');
    const made = new Database(path);
    made.pragma('page_size = 4096');
    made.pragma('journal_mode = WAL');
    made.close();
    const store = await openStore(`sqlite:${path}`);
    await store.tenant('acme').reserve({ run: 'r1', quota: { period: 'monthly', maxConcurrentRuns: 1 }, atMs: 1 });
    expect(await store.tenant('acme').running()).toBe(1);
    await store.close();
    expect(pageSizeOf(path)).toBe(4096);
  });
});
