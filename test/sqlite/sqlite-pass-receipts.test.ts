import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';

// A pass's own settle keeps its receipt in the pass row. These cases pin, on the rows
// themselves, where it goes and that a tombstone still refuses it.

const T0 = 1_767_600_000_000; // 2026-01-05T08:00:00Z

describe('a pass receipt on SQLite', () => {
  let dir: string;
  let path: string;
  let store: QuotaStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-pass-receipts-'));
    path = join(dir, 'receipts.db');
    store = await openStore(`sqlite:${path}`);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const admit = (run: string) =>
    store.tenant('acme').admit({ run, budget: { maxTokens: 100, maxCallTokens: 0 }, width: 1, atMs: T0, leaseMs: 60_000 });

  it("settlePass writes its receipt into the pass row and none into quota_settled; the port's settle writes quota_settled", async () => {
    expect((await admit('r1')).ok).toBe(true);
    expect((await admit('r2')).ok).toBe(true);
    await store.tenant('acme').settlePass({ run: 'r1', epoch: 1, spend: { tokens: 7, minorUnits: 2 }, concludes: true, atMs: T0 + 1 });
    await store.tenant('acme').settle({ run: 'r2', epoch: 1, period: '2026-01', spend: { tokens: 3, minorUnits: 0 }, releaseSlot: true, concludes: false });
    const reader = new Database(path, { readonly: true });
    try {
      const passes = reader
        .prepare('SELECT run_id, settled_at_ms, receipt_tokens, receipt_minor_units, receipt_concludes FROM quota_passes ORDER BY run_id')
        .all();
      expect(passes).toEqual([
        { run_id: 'r1', settled_at_ms: T0 + 1, receipt_tokens: 7, receipt_minor_units: 2, receipt_concludes: 1 },
        { run_id: 'r2', settled_at_ms: null, receipt_tokens: null, receipt_minor_units: null, receipt_concludes: null },
      ]);
      expect(reader.prepare('SELECT run_id, tokens FROM quota_settled ORDER BY run_id').all()).toEqual([{ run_id: 'r2', tokens: 3 }]);
    } finally {
      reader.close();
    }
  });

  it('a pass whose run id has a prune tombstone (a damaged file) is refused CONFLICT on settle, and nothing is written', async () => {
    expect((await admit('r1')).ok).toBe(true);
    const writer = new Database(path);
    try {
      writer
        .prepare(`INSERT INTO quota_pruned (tenant, run_id, status, last_epoch, closed_at_ms, pruned_at_ms) VALUES ('acme', 'r1', 'concluded', 1, ?, ?)`)
        .run(T0, T0);
    } finally {
      writer.close();
    }
    await expect(
      store.tenant('acme').settlePass({ run: 'r1', epoch: 1, spend: { tokens: 7, minorUnits: 0 }, concludes: true, atMs: T0 + 1 }),
    ).rejects.toMatchObject({ code: 'CONFLICT', details: { pruned: expect.anything() } });
    expect(await store.tenant('acme').spent('2026-01')).toEqual({ tokens: 0, minorUnits: 0 });
    expect((await store.tenant('acme').getRun('r1'))?.status).toBe('running');
  });
});
