import { describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { requireAgent } from '../../src/store/lifecycle-arguments.js';
import type { SweepResult } from '../../src/plane/operator-types.js';
import type { Plane } from '../../src/plane/plane.js';
import { startSweeper } from '../../src/plane/sweeper.js';
import { systemClock } from '../../src/plane/system-clock.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import { invalidArgumentOf } from '../invalid-argument.js';
import { memoryPlane } from './plane-fixtures.js';

// createPlane's option checks, the sweep's reporting filter, and small plane pieces.

function fieldOf(fn: () => unknown): string {
  const error = invalidArgumentOf(fn);
  const field = String(error.details.field);
  expect(error.message).toMatch(new RegExp(`^${field}: must .*got `));
  return field;
}

describe('createPlane options', () => {
  it('names a store that is not one and a clock without nowMs()', async () => {
    const { store, close } = await memoryPlane();
    try {
      expect(fieldOf(() => createPlane('store' as never))).toBe('options');
      for (const bad of [null, 'sqlite:x.db', {}, { tenant: 'acme' }]) expect(fieldOf(() => createPlane({ store: bad as never }))).toBe('store');
      for (const bad of [5, 'now', { nowMs: 5 }, () => 5]) expect(fieldOf(() => createPlane({ store, clock: bad as never }))).toBe('clock');
      // No clock means the wall clock.
      const plane = createPlane({ store });
      const before = Date.now();
      const pass = await plane.admit({ tenant: 'acme', run: 'run-a' });
      const after = Date.now();
      if (!pass.ok) throw new Error('refused');
      expect(pass.leaseExpiresAtMs - 60_000).toBeGreaterThanOrEqual(before);
      expect(pass.leaseExpiresAtMs - 60_000).toBeLessThanOrEqual(after);
    } finally {
      await close();
    }
  });

  it('the system clock reads Date.now()', () => {
    const before = Date.now();
    const now = systemClock.nowMs();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});

describe('sweep reports only the runs it changed', () => {
  it('leaves out a run whose heartbeat landed between the read and its sweep, and keeps half-changed ones', async () => {
    const outcomes: Record<string, { releasedSlot: boolean; stranded: boolean }> = {
      'run-a': { releasedSlot: false, stranded: false },
      'run-b': { releasedSlot: true, stranded: false },
      'run-c': { releasedSlot: false, stranded: true },
    };
    const handle = {
      lapsedRuns: async () => Object.keys(outcomes),
      sweepRun: async ({ run }: { run: string }) => ({ run, ...outcomes[run] }),
      sweepWaiters: async () => ({ expired: 0, recovered: 0, granted: 0 }),
    } as unknown as TenantStore;
    const store: QuotaStore = { backend: 'fake', tenant: () => handle, tenants: async () => ['acme'], close: async () => {} };
    const result = await createPlane({ store, clock: { nowMs: () => 5 } }).sweep();
    expect(result).toEqual({
      atMs: 5,
      swept: [
        { tenant: 'acme', run: 'run-b', releasedSlot: true, stranded: false },
        { tenant: 'acme', run: 'run-c', releasedSlot: false, stranded: true },
      ],
    });
  });
});

describe('startSweeper without onSweep', () => {
  it('sweeps without failing', async () => {
    const errors: unknown[] = [];
    const plane = { sweep: async (): Promise<SweepResult> => ({ atMs: 1, swept: [] }) } as unknown as Plane;
    await startSweeper(plane, { intervalMs: 1000, onError: (error) => errors.push(error) })();
    expect(errors).toEqual([]);
  });
});

describe('agent digests', () => {
  it('a digest of 64 hex digits after something else is not one', () => {
    const digest = 'ab'.repeat(32);
    expect(fieldOf(() => requireAgent('agent', { name: 'clerk', digest: `g${digest}` }))).toBe('agent.digest');
    expect(fieldOf(() => requireAgent('agent', { name: 'clerk', digest: `${digest}g` }))).toBe('agent.digest');
  });
});
