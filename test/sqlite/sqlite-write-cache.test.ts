import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parseQuota } from '../../src/core/quota.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import type { AdmitRequest } from '../../src/store/types.js';
import { SqliteConnection } from '../../src/store/sqlite/sqlite-connection.js';
import { SELECT_QUOTA, UPSERT_QUOTA } from '../../src/store/sqlite/sqlite-queries.js';
import { readStoredQuota } from '../../src/store/sqlite/sqlite-quota.js';
import { migrateSqlite } from '../../src/store/sqlite/sqlite-migrations.js';

// The connection's write cache: inside write transactions a tenant's quota, its halts, the
// plane ceiling and the head of its waiting queue are read once and then answered from memory. These
// cases pin what must clear it, or a decision would judge by configuration that no longer stands.

const T0 = 1_767_600_000_000; // 2026-01-05T08:00:00Z
const BUDGET = { maxTokens: 100, maxCallTokens: 100 };
const OPERATOR = { actor: 'ops', basis: 'asserted' } as const;

function admission(run: string, atMs = T0): AdmitRequest {
  return { run, budget: BUDGET, width: 1, atMs, leaseMs: 60_000 };
}

describe('the write cache and another connection on the same file', () => {
  let dir: string;
  let first: QuotaStore;
  let second: QuotaStore;
  // The second connection's operator acts, through a plane as an operator would make them.
  let secondPlane: Plane;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-write-cache-'));
    const url = `sqlite:${join(dir, 'cache.db')}`;
    first = await openStore(url);
    second = await openStore(url);
    secondPlane = createPlane({ store: second });
  });
  afterEach(async () => {
    await first.close();
    await second.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a quota another connection lowered binds this connection's next admission", async () => {
    await createPlane({ store: first }).setQuota('acme', { period: 'monthly', maxConcurrentRuns: 5 }, { by: OPERATOR, newTenant: true });
    expect((await first.tenant('acme').admit(admission('r1'))).ok).toBe(true);
    await secondPlane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, OPERATOR);
    const refused = await first.tenant('acme').admit(admission('r2'));
    expect(refused).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns', limit: 1 } });
  });

  it("a halt another connection threw refuses this connection's next admission", async () => {
    expect((await first.tenant('acme').admit(admission('r1'))).ok).toBe(true);
    await secondPlane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident', by: OPERATOR, newTenant: true });
    expect(await first.tenant('acme').admit(admission('r2'))).toMatchObject({ ok: false, refusal: { code: 'Halted' } });
  });

  it("a plane ceiling another connection set binds this connection's next admission", async () => {
    expect((await first.tenant('acme').admit(admission('r1'))).ok).toBe(true);
    await secondPlane.setPlaneCeiling({ maxConcurrentRuns: 1 }, OPERATOR);
    expect(await first.tenant('globex').admit(admission('g1'))).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns', bound: 'plane' } });
  });

  it("a waiter another connection queued is granted by this connection's next settle that frees a slot", async () => {
    await secondPlane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { by: OPERATOR, newTenant: true });
    const pass = await first.tenant('acme').admit(admission('r1'));
    expect(pass.ok).toBe(true);
    // This connection's settles and admissions have read the (empty) queue head before.
    expect(await first.tenant('acme').admit(admission('r2'))).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
    const waiting = await second.tenant('acme').admitOrWait(admission('w1'), { untilMs: T0 + 60_000, leaseMs: 60_000 });
    expect(waiting).toMatchObject({ ok: false, waiting: true });
    await first.tenant('acme').settlePass({ run: 'r1', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: true, atMs: T0 + 1 });
    expect(await first.tenant('acme').waitQueue({ atMs: T0 + 2 })).toMatchObject({ depth: 0, uncollected: 1 });
  });
});

describe('the write cache inside one connection', () => {
  let db: Database.Database;
  let conn: SqliteConnection;
  let reads: number;

  beforeEach(() => {
    db = new Database(':memory:');
    migrateSqlite(db, 0);
    // Decisions queued together share a batch: the default hold of a few ms could split them on a loaded machine.
    conn = new SqliteConnection(db, { busyTimeoutMs: 0, maxBatchHoldMs: 60_000 });
    reads = 0;
    const get = conn.get.bind(conn);
    conn.get = ((sql, params) => {
      if (sql === SELECT_QUOTA) reads += 1;
      return get(sql, params);
    }) as typeof conn.get;
  });
  afterEach(() => conn.close());

  const quotaJson = (maxConcurrentRuns: number) => JSON.stringify(parseQuota({ period: 'monthly', maxConcurrentRuns }));
  const storedLimit = () => conn.write(() => readStoredQuota(conn, 'acme')?.maxConcurrentRuns);

  it('answers a quota read again from memory, and reads it afresh after a write to it', async () => {
    await conn.write(() => conn.run(UPSERT_QUOTA, { tenant: 'acme', quotaJson: quotaJson(3) }));
    expect(await storedLimit()).toBe(3);
    expect(await storedLimit()).toBe(3);
    expect(reads).toBe(1);
    await conn.write(() => conn.run(UPSERT_QUOTA, { tenant: 'acme', quotaJson: quotaJson(4) }));
    expect(await storedLimit()).toBe(4);
    expect(reads).toBe(2);
  });

  it('answers one frozen value to every decision, so no decision can change what another reads', async () => {
    const json = JSON.stringify(parseQuota({ period: 'monthly', maxConcurrentRuns: 3, agents: { bot: { maxConcurrentRuns: 1 } } }));
    await conn.write(() => conn.run(UPSERT_QUOTA, { tenant: 'acme', quotaJson: json }));
    const [first, second] = await Promise.all([
      conn.write(() => readStoredQuota(conn, 'acme')),
      conn.write(() => readStoredQuota(conn, 'acme')),
    ]);
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first?.agents?.['bot'])).toBe(true);
    expect(() => {
      (first as { maxConcurrentRuns?: number }).maxConcurrentRuns = 9;
    }).toThrow(TypeError);
  });

  it('a read outside a write transaction never answers from memory', async () => {
    await conn.write(() => conn.run(UPSERT_QUOTA, { tenant: 'acme', quotaJson: quotaJson(3) }));
    await storedLimit();
    expect(await conn.read(() => readStoredQuota(conn, 'acme')?.maxConcurrentRuns)).toBe(3);
    expect(reads).toBe(2);
  });

  it('forgets what a decision read after its own write once that decision is rolled back', async () => {
    await conn.write(() => conn.run(UPSERT_QUOTA, { tenant: 'acme', quotaJson: quotaJson(3) }));
    // One batch: the first decision writes a quota, reads it (so the cache holds it) and throws; the
    // second reads the quota that stands, the one the rollback put back.
    const thrown = conn.write(() => {
      conn.run(UPSERT_QUOTA, { tenant: 'acme', quotaJson: quotaJson(9) });
      expect(readStoredQuota(conn, 'acme')?.maxConcurrentRuns).toBe(9);
      throw new Error('the decision fails after reading its own write');
    });
    const after = storedLimit();
    await expect(thrown).rejects.toThrow('the decision fails');
    expect(await after).toBe(3);
  });

  it('forgets what a batch read after a write when a later decision throws after writing and the batch runs again', async () => {
    await conn.write(() => conn.run(UPSERT_QUOTA, { tenant: 'acme', quotaJson: quotaJson(3) }));
    // One batch: the first decision reads the quota (3), the second raises it to 9 and reads it (so
    // the cache holds 9), the third writes and throws, so the whole transaction is rolled back and
    // the batch runs again. In that run the first decision must read 3 again, not the 9 the cache
    // held from the rolled-back run.
    const first = storedLimit();
    const second = conn.write(() => {
      conn.run(UPSERT_QUOTA, { tenant: 'acme', quotaJson: quotaJson(9) });
      return readStoredQuota(conn, 'acme')?.maxConcurrentRuns;
    });
    const third = conn.write(() => {
      // A table the cache does not hold, so this write leaves the cache as it is.
      conn.run("INSERT INTO quota_running (tenant, run_id, admitted_at_ms) VALUES ('globex', 'g1', 1)", {});
      throw new Error('the third decision fails after writing');
    });
    await expect(third).rejects.toThrow('the third decision fails');
    expect([await first, await second]).toEqual([3, 9]);
    expect(await storedLimit()).toBe(9);
  });

  it('forgets it too when a lone decision rolls its whole transaction back', async () => {
    await conn.write(() => conn.run(UPSERT_QUOTA, { tenant: 'acme', quotaJson: quotaJson(3) }));
    await expect(
      conn.write(() => {
        conn.run(UPSERT_QUOTA, { tenant: 'acme', quotaJson: quotaJson(9) });
        readStoredQuota(conn, 'acme');
        throw new Error('the decision fails after reading its own write');
      }),
    ).rejects.toThrow('the decision fails');
    expect(await storedLimit()).toBe(3);
  });
});
