import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { booksDisagreements, describeDifferences } from './books-agree.js';
import { closeSchemaStore, openSchemaStore, type SchemaStore } from './pg-test-support.js';

// docs/guides/postgresql.md: whatever writes quotaplane's tables behind its back (SQL by hand, a
// restore) must take the tenant's lock, which raises the books' version so kept rows are read
// again (postgres-books-cache.ts). A restore brings `quota_book_versions` back too, to a version
// the tenant has had before; were the lock to raise it by one, it could equal the version an
// instance kept rows at that the restore undid. The lock raises it to at least the server's clock
// in microseconds (quota_tenant_lock), so a version never comes back.

const T_MS = Date.UTC(2026, 11, 1, 12);
const BY = { actor: 'kept-restore', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 500, maxCallTokens: 500 };

let opened: SchemaStore;

beforeAll(async () => {
  opened = await openSchemaStore('kept_restore', { poolSize: 2 });
});

afterAll(async () => {
  await closeSchemaStore(opened);
});

describe('PostgreSQL: kept rows and a restore behind the store', () => {
  it('C3 after a restore and the tenant lock the guide asks for, a freed slot admits the next run here', async () => {
    const { store, admin, schema } = opened;
    const s = `"${schema}"`;
    const tenant = 'restored';
    const admit = (run: string) => store.tenant(tenant).admit({ run, budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 60_000 });
    await store.tenant(tenant).setQuota({ period: 'monthly', maxConcurrentRuns: 2 }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
    expect((await admit('r1')).ok).toBe(true);
    const version = async () => Number((await admin.query<{ version: string }>(`SELECT version FROM ${s}.quota_book_versions WHERE tenant = $1`, [tenant])).rows[0]?.version);
    // The backup: taken now, with r1 alone.
    const backedUp = await version();
    expect((await admit('r2')).ok).toBe(true);
    // The restore of that backup: r2's rows go, the count and the version are the backup's.
    await admin.query('BEGIN');
    for (const table of ['quota_passes', 'quota_running', 'quota_reserved', 'quota_runs']) {
      await admin.query(`DELETE FROM ${s}.${table} WHERE tenant = $1 AND run_id = 'r2'`, [tenant]);
    }
    await admin.query(`UPDATE ${s}.quota_figures SET running = 1 WHERE tenant = $1`, [tenant]);
    await admin.query(`UPDATE ${s}.quota_book_versions SET version = $2 WHERE tenant = $1`, [tenant, backedUp]);
    await admin.query('COMMIT');
    expect(describeDifferences(await booksDisagreements(opened.url, schema))).toBe('');
    // Then the tenant's lock, as the guide asks.
    await admin.query('BEGIN');
    await admin.query(`SELECT ${s}.quota_admission_lock($1)`, [tenant]);
    await admin.query('COMMIT');
    // One slot of two is held: r3 is admitted.
    expect(await admit('r3')).toMatchObject({ ok: true });
    expect(await store.tenant(tenant).running()).toBe(2);
  });
});
