import { describe, expect, it } from 'vitest';

import { WAITER_LEASE_MS } from '../../src/plane/wait-admission.js';
import { memoryPlane, T0 } from './plane-fixtures.js';

// Waiting admissions through the plane on one in-memory SQLite store (issue 12 item 1).
describe('waiting admissions (plane, SQLite in memory)', () => {
  it('a waiter is admitted by the settle that frees a slot, in the same transaction', async () => {
    const { plane, handle, close } = await memoryPlane();
    try {
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 });
      const first = await plane.admit({ tenant: 'acme', run: 'run-1' });
      expect(first.ok).toBe(true);
      const waiting = plane.admit({ tenant: 'acme', run: 'run-2', waitMs: 5_000 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect((await handle('acme').waitQueue({ atMs: T0 })).depth).toBe(1);
      await plane.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
      // The grant is in the books before the waiter collects it.
      expect(await handle('acme').runningRuns(10)).toEqual(['run-2']);
      const granted = await waiting;
      expect(granted).toMatchObject({ ok: true, run: 'run-2', epoch: 1 });
      expect((await handle('acme').waitQueue({ atMs: T0 })).depth).toBe(0);
    } finally {
      await close();
    }
  });

  it('a waiter whose time runs out gets TooManyRuns with its place and how long it waited, and holds nothing', async () => {
    const { plane, handle, clock, close } = await memoryPlane();
    try {
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 });
      await plane.admit({ tenant: 'acme', run: 'run-1' });
      const waiting = plane.admit({ tenant: 'acme', run: 'run-2', waitMs: 200 });
      await new Promise((resolve) => setTimeout(resolve, 20));
      clock.advance(200);
      const refused = await waiting;
      expect(refused.ok).toBe(false);
      if (refused.ok) return;
      expect(refused.refusal).toMatchObject({ code: 'TooManyRuns', running: 1, limit: 1, queuePosition: 1, waitedMs: 200 });
      expect(refused.message).toContain('waited 200 ms');
      expect(await handle('acme').runningRuns(10)).toEqual(['run-1']);
      expect(await handle('acme').waitQueue({ atMs: clock.nowMs() })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
    } finally {
      await close();
    }
  });
});

describe('waiting admissions are visible (issue 12 item 4)', () => {
  it('usage shows the queue depth and the oldest wait', async () => {
    const { plane, clock, close } = await memoryPlane();
    try {
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 });
      await plane.admit({ tenant: 'acme', run: 'run-1' });
      const gone = new AbortController();
      const waiting = plane.admit({ tenant: 'acme', run: 'run-2', waitMs: 60_000, signal: gone.signal });
      await new Promise((resolve) => setTimeout(resolve, 20));
      clock.advance(1_500);
      expect((await plane.usage({ tenant: 'acme' })).queue).toEqual({ depth: 1, oldestWaitMs: 1_500 });
      gone.abort();
      await expect(waiting).rejects.toThrow();
      expect((await plane.usage({ tenant: 'acme' })).queue).toEqual({ depth: 0, oldestWaitMs: null });
    } finally {
      await close();
    }
  });

  it('a sweep removes a waiter whose process died and reports it', async () => {
    const { plane, handle, clock, close } = await memoryPlane();
    try {
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 });
      await plane.admit({ tenant: 'acme', run: 'run-1' });
      // A waiter whose process is gone: it joined and never looked again.
      await handle('acme').admitOrWait(
        { run: 'run-2', budget: {}, width: 1, atMs: clock.nowMs(), leaseMs: 60_000 },
        { untilMs: clock.nowMs() + 60_000, leaseMs: WAITER_LEASE_MS },
      );
      clock.advance(WAITER_LEASE_MS);
      expect(await plane.sweep()).toEqual({
        atMs: clock.nowMs(),
        swept: [],
        waiters: [{ tenant: 'acme', expired: 1, recovered: 0, granted: 0 }],
      });
      expect((await plane.usage({ tenant: 'acme' })).queue.depth).toBe(0);
    } finally {
      await close();
    }
  });
});
