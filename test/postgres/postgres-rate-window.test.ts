import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { checkRate } from '../../src/core/rate-check.js';
import type { RateCeiling } from '../../src/core/rate.js';
import { openPostgresStore, type PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';

// Rate ceilings at any count on PostgreSQL: a dispatch is judged from one row per
// ceiling, so a window holding 100,000 dispatches answers exactly what checkRate answers over all
// of them (behaviour; the cost is measured by the bench).

const T_MS = 1_760_000_000_000;
const ROWS = 100_000;
const GRANT = 'tool://bulk/search';

let url: string;
let schema: string;
let store: PostgresQuotaStore;
const instantsMs: number[] = [];

beforeAll(async () => {
  url = testPgUrl();
  schema = freshSchemaName('rate_window');
  store = await openPostgresStore(url, { schema });
  // 100,000 dispatches numbered 1 … 100,000, one per ms, the last at T: the rows reserveRate
  // would have written, written in one statement.
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(
      `INSERT INTO "${schema}".quota_rate (tenant, grant_ref, ordinal, run_id, dispatch, reserved_at_ms)
       SELECT 'acme', $1, i, 'bulk-run', 'd' || i, $2::bigint - $3::bigint + i FROM generate_series(1, $3::bigint) AS i`,
      [GRANT, T_MS, ROWS],
    );
    await admin.query(
      `INSERT INTO "${schema}".quota_rate_grants (tenant, grant_ref, last_ordinal, last_at_ms) VALUES ('acme', $1, $2, $3)`,
      [GRANT, ROWS, T_MS],
    );
  } finally {
    await admin.end();
  }
  for (let i = 1; i <= ROWS; i += 1) instantsMs.push(T_MS - ROWS + i);
});

afterAll(async () => {
  await store?.close();
  if (schema !== undefined) await dropSchema(url, schema);
});

function expected(ceilings: readonly RateCeiling[], atMs: number, extra: readonly number[] = []) {
  const refusal = checkRate({ tenant: 'acme', grant: GRANT, ceilings, instantsMs: [...instantsMs, ...extra], atMs });
  return refusal === null ? { ok: true } : { ok: false, refusal };
}

describe('PostgreSQL rate ceilings with 100,000 dispatches in the window', () => {
  it('rateRoom answers what checkRate answers over every row: full ceilings with their true count and retry instant, room under a wider count', async () => {
    const acme = store.tenant('acme');
    const cases: { ceilings: RateCeiling[]; atMs: number }[] = [
      { ceilings: [{ count: 100_000, windowSeconds: 86_400 }], atMs: T_MS + 1 },
      { ceilings: [{ count: 100_001, windowSeconds: 86_400 }], atMs: T_MS + 1 },
      { ceilings: [{ count: 5, windowSeconds: 10 }], atMs: T_MS + 1 },
      { ceilings: [{ count: 100_001, windowSeconds: 86_400 }, { count: 50_000, windowSeconds: 60 }], atMs: T_MS },
      { ceilings: [{ count: 10_000, windowSeconds: 60 }, { count: 99_000, windowSeconds: 3_600 }], atMs: T_MS + 50_000 },
      { ceilings: [{ count: 1, windowSeconds: 1 }], atMs: T_MS + 1_000 },
      { ceilings: [{ count: 0, windowSeconds: 30 }], atMs: T_MS },
    ];
    for (const { ceilings, atMs } of cases) {
      expect(await acme.rateRoom(GRANT, ceilings, atMs), JSON.stringify({ ceilings, atMs })).toEqual(expected(ceilings, atMs));
    }
    // Sanity: the first case is the one the issue asks about, a full window of 100,000.
    expect(await acme.rateRoom(GRANT, [{ count: 100_000, windowSeconds: 86_400 }], T_MS + 1)).toMatchObject({
      ok: false,
      refusal: { code: 'RateLimited', reached: 100_000, retryAtMs: T_MS - ROWS + 1 + 86_400_000 },
    });
  });

  it('reserveRate records the 100,001st dispatch under a ceiling of 100,001, then refuses the next one like checkRate', async () => {
    const acme = store.tenant('acme');
    const ceilings = [{ count: 100_001, windowSeconds: 86_400 }];
    const dispatch = (key: string, atMs: number) =>
      acme.reserveRate({ grant: GRANT, run: 'bulk-run', dispatch: key, ceilings, atMs, exempt: false });
    expect(await dispatch('next-1', T_MS + 10)).toEqual({ ok: true });
    expect(await dispatch('next-1', T_MS + 10)).toEqual({ ok: true });
    expect(await dispatch('next-2', T_MS + 20)).toEqual(expected(ceilings, T_MS + 20, [T_MS + 10]));
    expect(await dispatch('next-2', T_MS + 20)).toMatchObject({ ok: false, refusal: { code: 'RateLimited', reached: 100_001 } });
  });
});
