import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';

// The background checkpointer starts on the first commit, after the COMMIT and before its callers
// were answered. A thread that cannot start (Node throws ERR_WORKER_INIT_FAILED when the process
// is out of threads) once left those callers unanswered for good, and every later write queued
// behind them. Here the thread never starts.
const started = vi.hoisted(() => ({ attempts: 0 }));
vi.mock('../../src/store/sqlite/sqlite-checkpointer.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/store/sqlite/sqlite-checkpointer.js')>();
  class NoThreadCheckpointer {
    constructor() {
      started.attempts += 1;
      throw Object.assign(new Error('cannot start a worker thread: EAGAIN'), { code: 'ERR_WORKER_INIT_FAILED' });
    }
  }
  return { ...original, WalCheckpointer: NoThreadCheckpointer };
});

describe('SQLite store whose checkpoint thread cannot start', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-no-checkpointer-'));
    started.attempts = 0;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('answers the decisions of the commit that tried to start it, keeps deciding, and closes', async () => {
    const store = await openStore(`sqlite:${join(dir, 'quotaplane.db')}`);
    const plane = createPlane({ store });
    await plane.setQuota('acme', { period: 'daily', maxConcurrentRuns: 2, maxTokensPerPeriod: 100_000 }, { newTenant: true });
    const budget = { maxTokens: 1_000, maxCallTokens: 500 };
    const [first, second] = await Promise.all([plane.admit({ tenant: 'acme', budget, width: 1 }), plane.admit({ tenant: 'acme', budget, width: 1 })]);
    if (!first.ok || !second.ok) throw new Error(`an admission was refused: ${JSON.stringify([first, second])}`);
    await plane.settle({ tenant: 'acme', run: first.run, epoch: first.epoch, spend: { tokens: 300, minorUnits: 0 }, concludes: true });
    expect((await plane.slotHolders({ tenant: 'acme' })).runs).toEqual([second.run]);
    // One attempt, on the first commit: later commits do not try again.
    expect(started.attempts).toBe(1);
    await expect(store.close()).resolves.toBeUndefined();
  });
});
