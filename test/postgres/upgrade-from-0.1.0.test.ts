import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openStore, type QuotaStore, type Usage } from '../../src/index.js';
import { postgresSnapshotOf, SNAPSHOT_PATHS } from '../schema/schema-snapshot.js';
import { expectSameBooks, expectStoreWorks } from '../upgrade/upgrade-checks.js';
import { expectedBooks, FIXTURE_RELEASE, loadPostgresFixture } from '../upgrade/upgrade-fixture.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

// A PostgreSQL store made by the release upgrades in place and keeps its books
// (docs/compatibility.md#the-upgrade-test): the release's dump loaded into a fresh schema, opened
// by this build (which applies any newer migration), read back and used.
describe(`a PostgreSQL store made by ${FIXTURE_RELEASE}`, () => {
  let url: string;
  let schema: string;
  let store: QuotaStore | null = null;

  beforeEach(async () => {
    url = testPgUrl();
    schema = freshSchemaName('upgrade');
    await loadPostgresFixture(url, schema);
    store = await openStore(url, { schema });
  });

  afterEach(async () => {
    await store?.close();
    store = null;
    await dropSchema(url, schema);
  });

  it('reads back every figure of its books after the upgrade', async () => {
    await expectSameBooks(store!, expectedBooks());
  });

  it('keeps working on them: retries, admissions, settlements, the waiter, halts, the audit chain', async () => {
    await expectStoreWorks(store!, expectedBooks());
    // And another instance reads the books the acts left (nothing is only in this one's memory).
    await store!.close();
    store = await openStore(url, { schema });
    const before = (expectedBooks().perTenant.acme as { usage: Record<string, Usage> }).usage['2026-01']!.spent;
    expect(await store.tenant('acme').spent('2026-01')).toEqual({ tokens: before.tokens + 1_111 + 3_000, minorUnits: before.minorUnits + 22 + 40 });
  });

  it('has, once upgraded, the schema a new store gets', async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      expect(await postgresSnapshotOf(admin, schema)).toBe(readFileSync(`${root}/${SNAPSHOT_PATHS.postgres}`, 'utf8'));
    } finally {
      await admin.end();
    }
  });
});
