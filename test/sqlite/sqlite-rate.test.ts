import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { MAX_RATE_WINDOW_SECONDS } from '../../src/core/rate.js';
import { openStore } from '../../src/store/open-store.js';

const T = 1_760_010_000_000;
const FLOOR = T - MAX_RATE_WINDOW_SECONDS * 1000;

describe('SQLite rate reservations', () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-rate-'));
    path = join(dir, 'quota.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function rowsOf(grant: string): number[] {
    const raw = new Database(path, { readonly: true });
    const rows = raw
      .prepare('SELECT reserved_at_ms FROM quota_rate WHERE grant_ref = ? ORDER BY reserved_at_ms')
      .all(grant) as { reserved_at_ms: number }[];
    raw.close();
    return rows.map((row) => row.reserved_at_ms);
  }

  it('a refused reservation inserts nothing but its prune of that grant, at the store-wide floor, commits', async () => {
    const store = await openStore(`sqlite:${path}`);
    const acme = store.tenant('acme');
    const reserve = (grant: string, dispatch: string, atMs: number, count: number) =>
      acme.reserveRate({ grant, run: 'r1', dispatch, ceilings: [{ count, windowSeconds: 60 }], atMs, exempt: false });

    expect(await reserve('tool://a/x', 'old', FLOOR, 10)).toEqual({ ok: true });
    expect(await reserve('tool://a/x', 'edge', FLOOR + 1, 10)).toEqual({ ok: true });
    expect(await reserve('tool://b/y', 'other', FLOOR, 10)).toEqual({ ok: true });

    // A ceiling of 0 refuses; the row at the floor goes, the one just after stays, nothing is added.
    expect(await reserve('tool://a/x', 'new', T, 0)).toMatchObject({ ok: false, refusal: { code: 'RateLimited', reached: 0 } });
    expect(rowsOf('tool://a/x')).toEqual([FLOOR + 1]);
    // Another grant's rows are not pruned by it.
    expect(rowsOf('tool://b/y')).toEqual([FLOOR]);
    await store.close();
  });

  it('rateRoom reads without pruning or inserting', async () => {
    const store = await openStore(`sqlite:${path}`);
    const acme = store.tenant('acme');
    await acme.reserveRate({ grant: 'tool://a/x', run: 'r1', dispatch: 'old', ceilings: [], atMs: FLOOR, exempt: false });
    expect(await acme.rateRoom('tool://a/x', [{ count: 1, windowSeconds: 60 }], T)).toEqual({ ok: true });
    expect(await acme.rateRoom('tool://a/x', [{ count: 1, windowSeconds: 0 }], T)).toMatchObject({
      ok: false,
      refusal: { code: 'UncountableRate' },
    });
    expect(rowsOf('tool://a/x')).toEqual([FLOOR]);
    await store.close();
  });
});
