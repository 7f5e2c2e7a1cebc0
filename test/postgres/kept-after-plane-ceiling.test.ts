import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { closeSchemaStore, openSchemaStore, type SchemaStore } from './pg-test-support.js';

// Kept rows are not decided on while a plane-wide ceiling bounds anything (postgres-books-cache.ts).
// A ceiling removed by a merge patch (core/plane-ceiling.ts `applyPlanePatch`) is stored as `{}`:
// it bounds nothing, and the tenant's decisions are one statement again, as before it was set (the
// kept write checks the ceiling is still the `{}` they were decided under).

const T_MS = Date.UTC(2026, 11, 1, 12);
const BY = { actor: 'kept-plane', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 500, maxCallTokens: 500 };

let opened: SchemaStore;

beforeAll(async () => {
  opened = await openSchemaStore('kept_plane', { poolSize: 2 });
});

afterAll(async () => {
  await closeSchemaStore(opened);
});

describe('PostgreSQL: kept rows after a plane ceiling is removed', () => {
  it("K1 with the ceiling removed, the tenant's next decision is one statement again", async () => {
    const { store } = opened;
    const tenant = 'after-plane';
    await store.tenant(tenant).setQuota({ period: 'monthly', maxConcurrentRuns: 50 }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
    const audit = { atMs: T_MS, by: BY, action: 'plane.set', subject: 'plane', detail: {} } as const;
    await store.setPlaneCeiling({ maxConcurrentRuns: 10 }, audit, 'quotaplane:plane');
    await store.setPlaneCeiling({}, audit, 'quotaplane:plane');
    for (const run of ['r1', 'r2']) expect((await store.tenant(tenant).admit({ run, budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 60_000 })).ok).toBe(true);
    let statements = 0;
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
      if (typeof text === 'string' && text.includes('quota_books_')) statements += 1;
      return (query as (...given: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    try {
      expect((await store.tenant(tenant).admit({ run: 'r3', budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 60_000 })).ok).toBe(true);
    } finally {
      pg.Client.prototype.query = query;
    }
    expect(statements).toBe(1);
  });
});
