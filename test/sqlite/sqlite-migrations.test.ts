import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { SQLITE_SCHEMA_VERSION } from '../../src/store/sqlite/sqlite-migrations.js';

// Every migration this build knows, as the schema table records them; each helper adds its own.
const RECORDED = [
  { version: 1, name: 'quota_schema' },
  { version: 2, name: 'placeholder_parallel_branch' }, // another branch's 0002 replaces it at merge
  { version: 3, name: 'api_key_expiry_and_use' },
];
import { openSqliteStore } from '../../src/store/sqlite/sqlite-store.js';

describe('SQLite migrations', () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-migrate-'));
    path = join(dir, 'quota.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('migrates a fresh file from version 0 to the current version and records every migration', async () => {
    const store = await openSqliteStore(path);
    expect(store.migration).toEqual({
      backend: 'sqlite',
      fromVersion: 0,
      toVersion: SQLITE_SCHEMA_VERSION,
      applied: RECORDED,
    });
    await store.close();
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare('SELECT version, name FROM quotaplane_schema ORDER BY version').all()).toEqual(RECORDED);
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
  });

  it('reopening a current file applies nothing and keeps its rows', async () => {
    const first = await openSqliteStore(path);
    await first.tenant('acme').reserve({ run: 'r1', quota: { period: 'monthly' }, atMs: 1 });
    await first.close();

    const second = await openSqliteStore(path);
    expect(second.migration).toEqual({ backend: 'sqlite', fromVersion: SQLITE_SCHEMA_VERSION, toVersion: SQLITE_SCHEMA_VERSION, applied: [] });
    expect(await second.tenant('acme').runningRuns(10)).toEqual(['r1']);
    await second.close();
  });

  it('refuses a file whose recorded version is newer than this build with SCHEMA_TOO_NEW naming both versions', async () => {
    await (await openSqliteStore(path)).close();
    const raw = new Database(path);
    raw.prepare('INSERT INTO quotaplane_schema (version, name, applied_at_ms) VALUES (?, ?, ?)').run(999, 'from_the_future', 1);
    raw.close();

    const error = await openSqliteStore(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(QuotaError);
    expect((error as QuotaError).code).toBe('SCHEMA_TOO_NEW');
    expect((error as QuotaError).message).toContain('version 999');
    expect((error as QuotaError).message).toContain(`up to ${SQLITE_SCHEMA_VERSION}`);
    expect((error as QuotaError).details).toMatchObject({ foundVersion: 999, supportedVersion: SQLITE_SCHEMA_VERSION });

    // Nothing was changed by the refused open.
    const after = new Database(path, { readonly: true });
    expect(after.prepare('SELECT version FROM quotaplane_schema ORDER BY version').all()).toEqual([
      ...RECORDED.map(({ version }) => ({ version })),
      { version: 999 },
    ]);
    after.close();
  });
});
