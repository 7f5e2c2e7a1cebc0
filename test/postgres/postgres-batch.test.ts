import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { openStore } from '../../src/store/open-store.js';
import type { AdmitOutcome } from '../../src/store/types.js';
import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { closeSchemaStore, openSchemaStore } from './pg-test-support.js';
import { RaceCluster } from './race-cluster.js';
import type { RaceOp } from './race-protocol.js';
import { booksDisagreements, describeDifferences } from './books-agree.js';

// Batched decisions on PostgreSQL (docs/design/decisions.md "Group commit"), on a real server:
// concurrent decisions of one store share one transaction, each in its own subtransaction; a
// decision that raises rolls back alone; a batch whose commit fails acknowledges nothing; and the
// concurrency ceiling stays exact under batching, in one process and across four.

const T_MS = 1_760_000_000_000;
const LIBRARY = { actor: 'batch-test', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 100, maxCallTokens: 10 };

let url: string;
let schema: string;
let store: PostgresQuotaStore;
let admin: pg.Client;

beforeAll(async () => {
  ({ url, schema, store, admin } = await openSchemaStore('batch', { poolSize: 4 }));
  // A probe table and two test-only triggers on the run registry: every registered run records the
  // transaction it was written in; run id 'poison' raises at once, 'commit-poison' at commit.
  await admin.query(`
    CREATE TABLE "${schema}".batch_probe (run_id text PRIMARY KEY, xid bigint NOT NULL);
    CREATE FUNCTION "${schema}".batch_probe_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NEW.run_id = 'poison' THEN RAISE EXCEPTION 'poisoned admission'; END IF;
      INSERT INTO "${schema}".batch_probe VALUES (NEW.run_id, txid_current());
      RETURN NEW;
    END $fn$;
    CREATE TRIGGER batch_probe BEFORE INSERT ON "${schema}".quota_runs FOR EACH ROW EXECUTE FUNCTION "${schema}".batch_probe_row();
    CREATE FUNCTION "${schema}".batch_commit_fault() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      IF NEW.run_id = 'commit-poison' THEN RAISE EXCEPTION 'refused at commit'; END IF;
      RETURN NULL;
    END $fn$;
    CREATE CONSTRAINT TRIGGER batch_commit_fault AFTER INSERT ON "${schema}".quota_runs
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "${schema}".batch_commit_fault();
  `);
});

afterAll(async () => {
  await closeSchemaStore({ url, schema, store, admin });
});

async function setCeilings(tenant: string, maxConcurrentRuns: number, spend = true): Promise<void> {
  await store.tenant(tenant).setQuota(
    spend ? { period: 'monthly', maxConcurrentRuns, maxTokensPerPeriod: 1_000_000 } : { period: 'monthly', maxConcurrentRuns },
    { atMs: T_MS, by: LIBRARY, action: 'quota.set', subject: 'quota', detail: {} },
  );
}

function admit(tenant: string, run: string): Promise<AdmitOutcome> {
  return store.tenant(tenant).admit({ run, budget: BUDGET, width: 1, atMs: T_MS, leaseMs: 60_000 });
}

describe('PostgreSQL batched decisions', () => {
  it('a batch in which one decision throws commits the others, in one transaction, and rolls the thrower back alone', async () => {
    const tenant = 'isolation';
    await setCeilings(tenant, 10);
    const runs = ['a1', 'a2', 'poison', 'a3', 'a4'];
    // Issued together on an idle store: they leave in one batch.
    const settled = await Promise.allSettled(runs.map((run) => admit(tenant, run)));
    const poisoned = settled[2];
    expect(poisoned?.status).toBe('rejected');
    expect((poisoned as PromiseRejectedResult).reason).toBeInstanceOf(QuotaError);
    expect(((poisoned as PromiseRejectedResult).reason as QuotaError).message).toContain('poisoned admission');
    for (const index of [0, 1, 3, 4]) expect(settled[index]).toMatchObject({ status: 'fulfilled', value: { ok: true, epoch: 1 } });
    const handle = store.tenant(tenant);
    expect(await handle.running()).toBe(4);
    expect(await handle.runningRuns(100)).toEqual(['a1', 'a2', 'a3', 'a4']);
    // The thrower's hold and slot (written before its run row raised) were rolled back with it.
    expect((await handle.reservations(100)).map((held) => held.run)).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(await handle.reserved('2025-10')).toEqual({ tokens: 4 * 110, minorUnits: 0 });
    expect(await handle.getRun('poison')).toBeNull();
    const probe = await admin.query<{ run_id: string; xid: string }>(`SELECT run_id, xid::text FROM "${schema}".batch_probe ORDER BY run_id`);
    expect(probe.rows.map((row) => row.run_id)).toEqual(['a1', 'a2', 'a3', 'a4']);
    expect(new Set(probe.rows.map((row) => row.xid)).size).toBe(1);
  });

  it('a fault during the batch commit acknowledges nothing: every caller gets STORE_UNAVAILABLE and nothing is written', async () => {
    const tenant = 'commit-fault';
    await setCeilings(tenant, 10);
    const runs = ['b1', 'b2', 'commit-poison', 'b3'];
    const settled = await Promise.allSettled(runs.map((run) => admit(tenant, run)));
    for (const outcome of settled) {
      expect(outcome.status).toBe('rejected');
      const reason = (outcome as PromiseRejectedResult).reason as QuotaError;
      expect(reason).toBeInstanceOf(QuotaError);
      expect(reason.code).toBe('STORE_UNAVAILABLE');
    }
    const handle = store.tenant(tenant);
    expect(await handle.running()).toBe(0);
    expect(await handle.reservations(100)).toEqual([]);
    expect(await handle.reserved('2025-10')).toEqual({ tokens: 0, minorUnits: 0 });
    for (const run of runs) expect(await handle.getRun(run)).toBeNull();
    // The store goes on: the next decisions commit.
    expect(await admit(tenant, 'b5')).toMatchObject({ ok: true });
    expect(await handle.running()).toBe(1);
  });

  it('X1 64 concurrent admissions at maxConcurrentRuns 4 from one store object admit exactly 4 (10 repetitions)', async () => {
    for (let rep = 0; rep < 10; rep += 1) {
      const tenant = `one-store-${rep}`;
      await setCeilings(tenant, 4);
      const runs = Array.from({ length: 64 }, (_, i) => `r-${rep}-${String(i).padStart(2, '0')}`);
      const outcomes = await Promise.all(runs.map((run) => admit(tenant, run)));
      const admitted = runs.filter((_, i) => outcomes[i]?.ok === true);
      expect(admitted, `repetition ${rep}`).toHaveLength(4);
      expect(outcomes.filter((outcome) => !outcome.ok).map((outcome) => (outcome.ok ? '' : outcome.refusal.code))).toEqual(
        Array.from({ length: 60 }, () => 'TooManyRuns'),
      );
      expect(await store.tenant(tenant).running(), `repetition ${rep}`).toBe(4);
      expect(await store.tenant(tenant).runningRuns(100), `repetition ${rep}`).toEqual(admitted.sort());
    }
  });

  it('X1 64 concurrent admissions at maxConcurrentRuns 4 across 4 processes, each batching its 16, admit exactly 4 (5 repetitions)', async () => {
    const cluster = await RaceCluster.start(4, url, schema);
    try {
      for (let rep = 0; rep < 5; rep += 1) {
        const tenant = `four-stores-${rep}`;
        // The workers admit with an empty budget, so this quota bounds concurrency alone.
        await setCeilings(tenant, 4, false);
        const ops: RaceOp[][] = Array.from({ length: 4 }, (_, worker) =>
          Array.from({ length: 16 }, (_, i) => ({ kind: 'admit', tenant, run: `w${worker}-${rep}-${i}`, atMs: T_MS }) as const),
        );
        const results = (await cluster.fire(ops)).flat();
        expect(results.filter((result) => result === 'ok'), `repetition ${rep}`).toHaveLength(4);
        expect(results.filter((result) => result === 'TooManyRuns'), `repetition ${rep}`).toHaveLength(60);
        expect(await store.tenant(tenant).running(), `repetition ${rep}`).toBe(4);
      }
    } finally {
      await cluster.close();
    }
  });

  it('refuses a maxBatch above 64 or a batchLanes of 0, naming the field, through openStore too', async () => {
    for (const [options, field] of [
      [{ maxBatch: 65 }, 'maxBatch'],
      [{ batchLanes: 0 }, 'batchLanes'],
    ] as const) {
      for (const open of [openPostgresStore, openStore]) {
        const error = await open(url, { schema, ...options }).then(
          () => null,
          (caught: unknown) => caught as QuotaError,
        );
        expect({ code: error?.code, field: error?.details.field }).toEqual({ code: 'INVALID_ARGUMENT', field });
      }
    }
  });
});

describe('the books after the tests above', () => {
  it('every derived figure agrees with the rows it summarises once every batch above, the failed ones included (books-agree.ts)', async () => {
    const differences = await booksDisagreements(url, schema);
    expect(differences, describeDifferences(differences)).toEqual([]);
  });
});
