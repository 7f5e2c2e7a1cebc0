import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_AMOUNT } from '../../src/core/amounts.js';
import { QuotaError } from '../../src/core/errors.js';
import type { PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { closeSchemaStore, openSchemaStore } from './pg-test-support.js';

// What the conformance battery cannot see through the port: the admission lock is per tenant,
// amounts saturate in the database and come back as numbers, and unreadable rows are refused.

const T_MS = 1_760_000_000_000;
const OPS = { actor: 'ops', basis: 'asserted' } as const;

let url: string;
let schema: string;
let store: PostgresQuotaStore;
let admin: pg.Client;

beforeAll(async () => {
  ({ url, schema, store, admin } = await openSchemaStore('store', { busyTimeoutMs: 1_000 }));
});

afterAll(async () => {
  await closeSchemaStore({ url, schema, store, admin });
});

async function rejection(promise: Promise<unknown>): Promise<QuotaError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  if (!(error instanceof QuotaError)) throw new Error(`expected a QuotaError, got ${String(error)}`);
  return error;
}

describe('PostgreSQL admission lock', () => {
  it('an admission of a tenant whose lock is held waits (and here times out as STORE_UNAVAILABLE) while another tenant is admitted at once', async () => {
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT "${schema}".quota_admission_lock($1)`, ['lock-acme']);
      const quota = { period: 'monthly', maxConcurrentRuns: 5 } as const;
      const other = await store.tenant('lock-globex').admit({ run: 'g1', budget: {}, width: 1, atMs: T_MS, leaseMs: 1, quota });
      expect(other.ok).toBe(true);
      const blocked = await rejection(
        store.tenant('lock-acme').admit({ run: 'a1', budget: {}, width: 1, atMs: T_MS, leaseMs: 1, quota }),
      );
      expect(blocked.code).toBe('STORE_UNAVAILABLE');
      expect(blocked.details.code).toBe('55P03');
      await holder.query('ROLLBACK');
      // Nothing was admitted on the timed-out call; with the lock free it is admitted.
      expect(await store.tenant('lock-acme').getRun('a1')).toBeNull();
      const admitted = await store.tenant('lock-acme').admit({ run: 'a1', budget: {}, width: 1, atMs: T_MS, leaseMs: 1, quota });
      expect(admitted.ok).toBe(true);
    } finally {
      await holder.end();
    }
  });

  it('a tenant\'s lock in one schema does not hold up the same tenant in another schema of the database', async () => {
    const other = await openSchemaStore('store_other', { busyTimeoutMs: 1_000 });
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT "${schema}".quota_admission_lock($1)`, ['lock-shared']);
      const quota = { period: 'monthly', maxConcurrentRuns: 5 } as const;
      // Same tenant name, another schema: admitted at once, not held until the lock timeout.
      const admitted = await other.store.tenant('lock-shared').admit({ run: 's1', budget: {}, width: 1, atMs: T_MS, leaseMs: 1, quota });
      expect(admitted.ok).toBe(true);
      // In the holder's own schema the same tenant still waits for it.
      expect((await rejection(store.tenant('lock-shared').admit({ run: 's1', budget: {}, width: 1, atMs: T_MS, leaseMs: 1, quota }))).code).toBe('STORE_UNAVAILABLE');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
      await closeSchemaStore(other);
    }
  });

  it('the lock key carries the tenant length, so a tenant does not share a lock with one whose name it begins', async () => {
    const keys = await admin.query<{ a: string; b: string }>(
      `SELECT hashtextextended('quota-admission:' || octet_length($1::text) || ':' || $1::text, 0)::text AS a,
              hashtextextended('quota-admission:' || octet_length($2::text) || ':' || $2::text, 0)::text AS b`,
      ['acme', 'acme:1'],
    );
    expect(keys.rows[0]?.a).not.toBe(keys.rows[0]?.b);
  });
});

describe('PostgreSQL amounts', () => {
  it('settled totals reach 2^53 − 1 exactly, come back as numbers, and one more is INVALID_ARGUMENT', async () => {
    const acme = store.tenant('amounts');
    const huge = { tokens: MAX_AMOUNT, minorUnits: MAX_AMOUNT - 1 };
    await acme.settle({ run: 'r-huge', epoch: 1, period: '2999-01', spend: huge, releaseSlot: false, concludes: false });
    await expect(
      acme.settle({ run: 'r-huge', epoch: 2, period: '2999-01', spend: huge, releaseSlot: false, concludes: false }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'spend.tokens' } });
    const spent = await acme.spent('2999-01');
    expect(spent).toEqual(huge);
    expect(typeof spent.tokens).toBe('number');
  });

  it('a hold that would take the period past 2^53 − 1 is SpentOut under a ceiling and INVALID_ARGUMENT without one', async () => {
    const acme = store.tenant('amounts-held');
    const quota = { period: 'monthly', maxTokensPerPeriod: MAX_AMOUNT } as const;
    const hold = (tokens: number) => ({ period: '2999-02', amount: { tokens, minorUnits: 0 } });
    expect(await acme.reserve({ run: 'h1', quota, hold: hold(MAX_AMOUNT), atMs: T_MS })).toEqual({ ok: true });
    const refused = await acme.reserve({ run: 'h2', quota, hold: hold(1), atMs: T_MS });
    expect(refused).toMatchObject({ ok: false, refusal: { code: 'SpentOut', reserved: MAX_AMOUNT, requested: 1, limit: MAX_AMOUNT } });
    await expect(acme.reserve({ run: 'h3', quota: { period: 'monthly' }, hold: hold(MAX_AMOUNT), atMs: T_MS })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { field: 'hold.tokens' },
    });
    expect(await acme.reserved('2999-02')).toEqual({ tokens: MAX_AMOUNT, minorUnits: 0 });
    expect(await acme.running()).toBe(1);
  });

  it('the database refuses an amount above 2^53 − 1 written behind quotaplane’s back', async () => {
    const error = await admin
      .query(`INSERT INTO "${schema}".quota_spent (tenant, period, tokens, minor_units) VALUES ('x', '2999-03', 9007199254740992, 0)`)
      .then(
        () => null,
        (caught: unknown) => caught as { code?: string },
      );
    expect(error?.code).toBe('23514');
  });
});

describe('PostgreSQL unreadable rows', () => {
  it('a halt row with an unreadable scope refuses every admission and the halt listing with STORE_CORRUPT', async () => {
    const tenant = 'corrupt-halt';
    await admin.query(
      `INSERT INTO "${schema}".quota_halted (tenant, scope, reason, by_actor, by_basis, at_ms) VALUES ($1, 'agent:', 'x', 'ops', 'asserted', 1)`,
      [tenant],
    );
    const admit = await rejection(store.tenant(tenant).admit({ run: 'r1', budget: {}, width: 1, atMs: T_MS, leaseMs: 1 }));
    expect(admit.code).toBe('STORE_CORRUPT');
    expect((await rejection(store.tenant(tenant).halts())).code).toBe('STORE_CORRUPT');
    expect(await store.tenant(tenant).getRun('r1')).toBeNull();
  });

  it('a halt row with an unknown operator basis refuses admission even though its scope would not cover the run', async () => {
    const tenant = 'corrupt-basis';
    await admin.query(
      `INSERT INTO "${schema}".quota_halted (tenant, scope, reason, by_actor, by_basis, at_ms) VALUES ($1, 'agent:other', 'x', 'ops', 'trust-me', 1)`,
      [tenant],
    );
    const admit = await rejection(store.tenant(tenant).admit({ run: 'r1', budget: {}, width: 1, atMs: T_MS, leaseMs: 1 }));
    expect(admit.code).toBe('STORE_CORRUPT');
  });

  it('liftHaltIf on a scope whose row is unreadable throws STORE_CORRUPT instead of answering false', async () => {
    const tenant = 'corrupt-lift';
    await admin.query(
      `INSERT INTO "${schema}".quota_halted (tenant, scope, reason, by_actor, by_basis, at_ms) VALUES ($1, 'tenant', 'x', 'ops', 'trust-me', 1)`,
      [tenant],
    );
    const error = await rejection(
      store.tenant(tenant).liftHaltIf({ scope: { kind: 'tenant' }, reason: 'x', by: OPS, atMs: 1 }),
    );
    expect(error.code).toBe('STORE_CORRUPT');
  });

  it('a stored quota that parseQuota would not read fails closed: admission refuses STORE_CORRUPT and decides nothing', async () => {
    const handle = store.tenant('bad-quota');
    await handle.setQuota({ period: 'monthly', maxConcurrentRuns: 2 }, { atMs: T_MS, by: OPS, action: 'quota.set', subject: 'quota', detail: {} });
    for (const [index, bad] of [
      '{"maxConcurrentRuns": -1}',
      '{"maxConcurrentRuns": 1.5}',
      '{"maxTokensPerPeriod": "1000"}',
      '{"period": "weekly"}',
      '{"surprise": 1}',
      '{"rateCeilings": {"tool://a/b": [{"count": 1}]}}',
      '{"rateCeilings": {"tool://a/b": {"count": 1, "windowSeconds": 60}}}',
      '[]',
    ].entries()) {
      // Written behind the store's back: nothing in the database judges a quota, the store does when it reads one.
      await admin.query(`UPDATE "${schema}".quota_tenants SET quota_json = $1::jsonb WHERE tenant = 'bad-quota'`, [bad]);
      const admitted = await handle.admit({ run: `r${index}`, budget: {}, width: 1, atMs: T_MS, leaseMs: 60_000 }).then(
        () => null,
        (caught: { code?: string }) => caught.code,
      );
      expect({ bad, admitted }).toEqual({ bad, admitted: 'STORE_CORRUPT' });
      await expect(handle.getQuota()).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
      expect(await handle.getRun(`r${index}`)).toBeNull();
    }
    expect(await handle.running()).toBe(0);
  });

  it('a stored quota with configured rate ceilings is read back as set, and dispatch judges them', async () => {
    const acme = store.tenant('configured-rate');
    const quota = { period: 'daily', rateCeilings: { 'tool://payments/refund': [{ count: 1, windowSeconds: 60 }] } } as const;
    await acme.setQuota(quota, { atMs: T_MS, by: OPS, action: 'quota.set', subject: 'quota', detail: {} });
    expect(await acme.getQuota()).toEqual(quota);
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T_MS, leaseMs: 1 });
    const dispatch = (key: string) =>
      acme.dispatch({ run: 'r1', grant: 'tool://payments/refund', dispatch: key, ceilings: [], exempt: false, atMs: T_MS });
    expect(await dispatch('k1')).toEqual({ ok: true });
    expect(await dispatch('k2')).toMatchObject({ ok: false, refusal: { code: 'RateLimited', reached: 1, ceiling: { count: 1, windowSeconds: 60 } } });
  });
});

describe('PostgreSQL identifiers that SQL arrays and JSON must carry intact', () => {
  it('a subject halt on a principal with quotes, commas, braces, backslashes and non-ASCII refuses admission and withholds the running run', async () => {
    const principal = 'a"b,c{d}\\e NULL ü 🚀';
    const acme = store.tenant('odd-principal');
    const chain = ['root', principal];
    expect(await acme.admit({ run: 'r1', chain, budget: {}, width: 1, atMs: T_MS, leaseMs: 60_000 })).toMatchObject({ ok: true });
    await acme.setHalt({ scope: { kind: 'subject', principal }, reason: 'withdrawn', by: OPS, atMs: T_MS });
    const refused = await acme.admit({ run: 'r2', chain, budget: {}, width: 1, atMs: T_MS, leaseMs: 60_000 });
    expect(refused).toMatchObject({ ok: false, refusal: { code: 'Halted', scope: `subject:${principal}` } });
    const beat = await acme.heartbeat({ run: 'r1', epoch: 1, atMs: T_MS + 1, leaseMs: 60_000 });
    expect(beat).toMatchObject({ ok: false, refusal: { code: 'Withheld', subject: principal, reason: 'withdrawn' } });
    expect((await acme.getRun('r1'))?.chain).toEqual(chain);
  });
});
