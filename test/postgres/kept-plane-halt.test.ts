import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import type { AdmitOutcome } from '../../src/store/types.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';
import { closeSchemaStore, openSchemaStore, type SchemaStore } from './pg-test-support.js';

// The plane-wide halt and rows kept between batches (docs/design/rules.md#c52): a batch deciding on
// its tenants' kept rows (postgres-batcher.ts `#decideOnKept`) must never admit past a plane-wide
// halt, whether it was thrown before the batch (the kept write compares it as stored,
// `expectPlaneHalt`, migrations/0002_halts_reach_running.sql) or while the batch is in flight (the
// halt is set under the plane ceiling's lock, taken exclusively, which the kept write only tries).

const T_MS = Date.UTC(2026, 11, 1, 12);
const BY = { actor: 'kept-plane-halt', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 100, maxCallTokens: 100 };
const PLANE_CHAIN = 'quotaplane:plane';

let opened: SchemaStore;
let stores: PostgresQuotaStore[];
let s: string;

beforeAll(async () => {
  opened = await openSchemaStore('kept_plane_halt', { poolSize: 4 });
  stores = [opened.store];
  for (let i = 0; i < 2; i += 1) stores.push(await openPostgresStore(opened.url, { schema: opened.schema, poolSize: 4 }));
  s = `"${opened.schema}"`;
});

afterAll(async () => {
  for (const store of stores?.slice(1) ?? []) await store.close();
  await closeSchemaStore(opened);
});

function on(index: number): PostgresQuotaStore {
  return stores[index % stores.length] as PostgresQuotaStore;
}

function admit(store: PostgresQuotaStore, tenant: string, run: string): Promise<AdmitOutcome> {
  return store.tenant(tenant).admit({ run, budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 600_000 });
}

async function setQuota(tenant: string): Promise<void> {
  await on(0).tenant(tenant).setQuota({ period: 'monthly', maxConcurrentRuns: 1_000 }, { atMs: T_MS, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
}

const audit = (action: string) => ({ atMs: T_MS, by: BY, action, subject: 'plane', detail: {} });

async function haltPlane(store: PostgresQuotaStore, reason: string): Promise<void> {
  await store.setPlaneHalt({ scope: { kind: 'plane' }, reason, by: BY, atMs: T_MS }, audit('plane.halt'), PLANE_CHAIN);
}

async function liftPlane(store: PostgresQuotaStore): Promise<void> {
  const standing = await store.getPlaneHalt();
  if (standing !== null) await store.liftPlaneHaltIf(standing, audit('plane.lift'), PLANE_CHAIN);
}

// Resolves once `count` backends other than the admin's wait for an advisory lock.
async function advisoryWaiters(count: number): Promise<void> {
  for (let tries = 0; tries < 300; tries += 1) {
    const { rows } = await opened.admin.query<{ n: string }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory' AND pid <> pg_backend_pid()`,
    );
    if (Number(rows[0]?.n ?? 0) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`fewer than ${count} backends waited for an advisory lock`);
}

describe('PostgreSQL: the plane-wide halt and kept rows', () => {
  it('C52 a plane-wide halt thrown on another instance refuses the next admission decided on kept rows here; lifted there, this one admits again', async () => {
    const tenant = 'kept-c52-a';
    await setQuota(tenant);
    expect((await admit(on(0), tenant, 'r1')).ok).toBe(true);
    expect((await admit(on(0), tenant, 'r2')).ok).toBe(true);
    await haltPlane(on(1), 'provider outage');
    expect(await admit(on(0), tenant, 'r3')).toMatchObject({ ok: false, refusal: { code: 'Halted', scope: 'plane', reason: 'provider outage' } });
    // Kept again, now with the halt: the refusal is decided on kept rows and checked by the write.
    expect(await admit(on(0), tenant, 'r4')).toMatchObject({ ok: false, refusal: { code: 'Halted', scope: 'plane' } });
    await liftPlane(on(1));
    expect((await admit(on(0), tenant, 'r5')).ok).toBe(true);
    expect(await on(2).tenant(tenant).running()).toBe(3);
  });

  it('C52 a plane-wide halt whose transaction is in flight when a batch decides on kept rows: the batch waits for it and is refused', async () => {
    const tenant = 'kept-c52-b';
    await setQuota(tenant);
    expect((await admit(on(0), tenant, 'r1')).ok).toBe(true);
    // The halt's transaction, as setPlaneHalt runs it: the plane ceiling's lock, then the row.
    await opened.admin.query('BEGIN');
    try {
      await opened.admin.query(`SELECT ${s}.quota_set_plane_lock()`);
      await opened.admin.query(
        `INSERT INTO ${s}.quota_plane_halt (id, reason, by_actor, by_basis, at_ms, reaches_running) VALUES (1, 'in flight', 'ops', 'asserted', $1, false)`,
        [T_MS],
      );
      const asked = admit(on(0), tenant, 'r2');
      // The kept write finds the plane lock taken and answers stale; the batch waits for the lock.
      await advisoryWaiters(1);
      await opened.admin.query('COMMIT');
      expect(await asked).toMatchObject({ ok: false, refusal: { code: 'Halted', scope: 'plane', reason: 'in flight' } });
    } catch (error) {
      await opened.admin.query('ROLLBACK');
      throw error;
    }
    await liftPlane(on(0));
    expect(await on(0).tenant(tenant).running()).toBe(1);
  });

  it('C52 admissions from three instances on kept rows racing a plane-wide halt: none sent after the halt stood is admitted, and the books agree', async () => {
    const tenants = ['kept-c52-r0', 'kept-c52-r1', 'kept-c52-r2'];
    for (const tenant of tenants) await setQuota(tenant);
    for (let round = 0; round < 6; round += 1) {
      // Every instance decides every tenant once, so each burst starts on kept rows everywhere.
      for (let i = 0; i < stores.length; i += 1) {
        for (const tenant of tenants) expect((await admit(on(i), tenant, `warm-${round}-${i}`)).ok).toBe(true);
      }
      let haltStood = false;
      const late: Promise<AdmitOutcome>[] = [];
      const halting = haltPlane(on(round), `round ${round}`).then(() => {
        haltStood = true;
      });
      const burst = Array.from({ length: 24 }, (_, k) => {
        const tenant = tenants[k % tenants.length] as string;
        return new Promise<void>((resolve) => setTimeout(resolve, k % 6)).then(async () => {
          const sent = admit(on(k), tenant, `b${round}-${k}`);
          if (haltStood) late.push(sent);
          await sent;
        });
      });
      await Promise.all([halting, ...burst]);
      expect(haltStood).toBe(true);
      // Sent once the halt stood: refused, on every instance.
      for (const [k, tenant] of tenants.entries()) late.push(admit(on(k + round), tenant, `after-${round}-${k}`));
      for (const outcome of await Promise.all(late)) expect(outcome).toMatchObject({ ok: false, refusal: { code: 'Halted', scope: 'plane' } });
      await liftPlane(on(round + 1));
    }
    expect(describeDifferences(await booksDisagreements(opened.url, opened.schema))).toBe('');
  });
});
