import { describe, expect, it } from 'vitest';

import { WAITER_LEASE_MS } from '../../src/plane/wait-admission.js';
import { memoryPlane, T0 } from './plane-fixtures.js';

// Waiting admissions through the plane on one in-memory SQLite store.
describe('waiting admissions (plane, SQLite in memory)', () => {
  it('a waiter is admitted by the settle that frees a slot, in the same transaction', async () => {
    const { plane, handle, close } = await memoryPlane();
    try {
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
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
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
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

describe('waiting admissions are visible', () => {
  it('usage shows the queue depth and the oldest wait', async () => {
    const { plane, clock, close } = await memoryPlane();
    try {
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
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
      await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
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

// Faults found by a new user: each test is named after its finding.
describe('waiting admissions: findings of the first trial', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('a cancelled duplicate waiter of the same run id leaves the original its place and its enqueuedAtMs', async () => {
    const { plane, handle, clock, close } = await memoryPlane();
    try {
      await plane.setQuota('f', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
      await plane.admit({ tenant: 'f', run: 'h' });
      const p = plane.admit({ tenant: 'f', run: 'p', waitMs: 30_000 });
      await sleep(20);
      clock.advance(10);
      const qGone = new AbortController();
      const q = plane.admit({ tenant: 'f', run: 'q', waitMs: 30_000, signal: qGone.signal });
      await sleep(20);
      clock.advance(10);
      // A retry of p after a lost answer (same run id) whose caller then disconnects.
      const retryGone = new AbortController();
      const retry = plane.admit({ tenant: 'f', run: 'p', waitMs: 30_000, signal: retryGone.signal });
      await sleep(20);
      retryGone.abort();
      await expect(retry).rejects.toThrow();
      clock.advance(10);
      await sleep(20);
      expect(await handle('f').waitQueue({ atMs: clock.nowMs() })).toEqual({ depth: 2, oldestEnqueuedAtMs: T0, uncollected: 0 });
      await plane.settle({ tenant: 'f', run: 'h', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
      expect(await p).toMatchObject({ ok: true, run: 'p', epoch: 1 });
      expect(await handle('f').runningRuns(10)).toEqual(['p']);
      qGone.abort();
      await expect(q).rejects.toThrow();
      expect(await handle('f').waitQueue({ atMs: clock.nowMs() })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
    } finally {
      await close();
    }
  });

  it('a caller of a run whose wait runs out while a retry of the same run waits on leaves the retry its place', async () => {
    const { plane, handle, clock, close } = await memoryPlane();
    try {
      await plane.setQuota('f', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
      await plane.admit({ tenant: 'f', run: 'h' });
      const shortCaller = plane.admit({ tenant: 'f', run: 'p', waitMs: 300 });
      await sleep(20);
      clock.advance(10);
      const z = plane.admit({ tenant: 'f', run: 'z', waitMs: 30_000 });
      await sleep(20);
      clock.advance(10);
      // A retry of p after a lost answer, with a longer wait.
      const retry = plane.admit({ tenant: 'f', run: 'p', waitMs: 30_000 });
      await sleep(20);
      clock.advance(300);
      expect(await shortCaller).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns', queuePosition: 1 } });
      // p still waits first, in the place it joined at.
      expect(await handle('f').waitQueue({ atMs: clock.nowMs() })).toEqual({ depth: 2, oldestEnqueuedAtMs: T0, uncollected: 0 });
      await plane.settle({ tenant: 'f', run: 'h', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
      expect(await handle('f').runningRuns(10)).toEqual(['p']);
      expect(await retry).toMatchObject({ ok: true, run: 'p', epoch: 1 });
      await plane.settle({ tenant: 'f', run: 'p', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });
      expect(await z).toMatchObject({ ok: true, run: 'z', epoch: 1 });
    } finally {
      await close();
    }
  });

  it('the last of two callers waiting on one run id to give up cancels its place', async () => {
    const { plane, handle, clock, close } = await memoryPlane();
    try {
      await plane.setQuota('f', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
      await plane.admit({ tenant: 'f', run: 'h' });
      const first = new AbortController();
      const second = new AbortController();
      const a = plane.admit({ tenant: 'f', run: 'p', waitMs: 30_000, signal: first.signal });
      await sleep(20);
      const b = plane.admit({ tenant: 'f', run: 'p', waitMs: 30_000, signal: second.signal });
      await sleep(20);
      first.abort();
      await expect(a).rejects.toThrow();
      expect((await handle('f').waitQueue({ atMs: clock.nowMs() })).depth).toBe(1);
      second.abort();
      await expect(b).rejects.toThrow();
      expect(await handle('f').waitQueue({ atMs: clock.nowMs() })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
      expect(await handle('f').runningRuns(10)).toEqual(['h']);
    } finally {
      await close();
    }
  });

  it('atMs together with waitMs is INVALID_ARGUMENT naming waitMs, in the past and in the future, and nothing waits', async () => {
    const { plane, handle, clock, close } = await memoryPlane();
    try {
      await plane.setQuota('f', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
      await plane.admit({ tenant: 'f', run: 'h' });
      for (const atMs of [clock.nowMs() - 60_000, clock.nowMs() + 60_000]) {
        await expect(plane.admit({ tenant: 'f', run: 'w', atMs, waitMs: 1_000 })).rejects.toMatchObject({
          code: 'INVALID_ARGUMENT',
          details: { field: 'waitMs' },
          message: expect.stringContaining('atMs'),
        });
      }
      // Without a wait (or with waitMs 0) atMs is an ordinary admission instant.
      const refused = await plane.admit({ tenant: 'f', run: 'w', atMs: clock.nowMs() - 60_000, waitMs: 0 });
      expect(refused).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
      expect((await handle('f').waitQueue({ atMs: clock.nowMs() })).depth).toBe(0);
    } finally {
      await close();
    }
  });
});
