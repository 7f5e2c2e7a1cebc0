import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openStore, type QuotaStore, type Usage } from '../../src/index.js';
import { tempDir } from '../plane/plane-fixtures.js';
import { SNAPSHOT_PATHS, sqliteSnapshotOf } from '../schema/schema-snapshot.js';
import { expectSameBooks, expectStoreWorks } from '../upgrade/upgrade-checks.js';
import { copySqliteFixture, expectedBooks, FIXTURE_RELEASE } from '../upgrade/upgrade-fixture.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

// A SQLite store made by the release upgrades in place and keeps its books
// (docs/compatibility.md#the-upgrade-test): the release's own database file, copied, opened by
// this build (which applies any newer migration), read back and used.
describe(`a SQLite store made by ${FIXTURE_RELEASE}`, () => {
  let dir: ReturnType<typeof tempDir>;
  let path: string;
  let store: QuotaStore | null = null;

  beforeEach(async () => {
    dir = tempDir();
    path = copySqliteFixture(dir.dir);
    store = await openStore(`sqlite:${path}`);
  });

  afterEach(async () => {
    await store?.close();
    store = null;
    dir.remove();
  });

  it('reads back every figure of its books after the upgrade', async () => {
    await expectSameBooks(store!, expectedBooks());
  });

  it('keeps working on them: retries, admissions, settlements, the waiter, halts, the audit chain', async () => {
    await expectStoreWorks(store!, expectedBooks());
    // And the books a later open reads are those the acts left (nothing is only in memory).
    await store!.close();
    store = await openStore(`sqlite:${path}`);
    const before = (expectedBooks().perTenant.acme as { usage: Record<string, Usage> }).usage['2026-01']!.spent;
    expect(await store.tenant('acme').spent('2026-01')).toEqual({ tokens: before.tokens + 1_111 + 3_000, minorUnits: before.minorUnits + 22 + 40 });
  });

  it('has, once upgraded, the schema a new store gets', async () => {
    await store!.close();
    store = null;
    const db = new Database(path, { readonly: true });
    try {
      expect(sqliteSnapshotOf(db)).toBe(readFileSync(`${root}/${SNAPSHOT_PATHS.sqlite}`, 'utf8'));
    } finally {
      db.close();
    }
  });
});
