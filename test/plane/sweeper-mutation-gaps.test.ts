import { afterEach, describe, expect, it, vi } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import type { SweepInput, SweepResult } from '../../src/plane/operator-types.js';
import type { Plane } from '../../src/plane/plane.js';
import { DEFAULT_SWEEP_INTERVAL_MS, MAX_SWEEP_INTERVAL_MS, startSweeper } from '../../src/plane/sweeper.js';
import { memoryPlane, type MemoryPlane } from './plane-fixtures.js';

// startSweeper's bounds, defaults and tenant option.

let fixture: MemoryPlane | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  vi.useRealTimers();
});

// A plane whose sweep records what it was asked and answers at once (or fails when told to).
function recordingPlane(fail = false): { plane: Plane; inputs: (SweepInput | undefined)[] } {
  const inputs: (SweepInput | undefined)[] = [];
  const plane = {
    sweep: async (input?: SweepInput): Promise<SweepResult> => {
      inputs.push(input);
      if (fail) throw new Error('store down');
      return { atMs: 1, swept: [] };
    },
  } as unknown as Plane;
  return { plane, inputs };
}

describe('startSweeper: interval bounds', () => {
  it('accepts 1 ms and the longest delay a Node timer keeps; refuses 0, one more, and fractions', async () => {
    expect(MAX_SWEEP_INTERVAL_MS).toBe(2 ** 31 - 1);
    expect(DEFAULT_SWEEP_INTERVAL_MS).toBe(5000);
    const { plane } = recordingPlane();
    for (const ok of [1, MAX_SWEEP_INTERVAL_MS]) await startSweeper(plane, { intervalMs: ok })();
    for (const bad of [0, -1, MAX_SWEEP_INTERVAL_MS + 1, 1.5, '5000']) {
      let caught: unknown;
      try {
        startSweeper(plane, { intervalMs: bad as never });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(QuotaError);
      expect((caught as QuotaError).details.field).toBe('intervalMs');
      expect((caught as QuotaError).message).toMatch(/^intervalMs: must be an integer number of milliseconds from 1 to 2147483647, got /);
    }
  });
});

describe('startSweeper: schedule and scope', () => {
  it('sweeps at once, then waits the default 5 s after each sweep', async () => {
    vi.useFakeTimers();
    const { plane, inputs } = recordingPlane();
    const stop = startSweeper(plane);
    await vi.advanceTimersByTimeAsync(0);
    expect(inputs.length).toBe(1);
    await vi.advanceTimersByTimeAsync(DEFAULT_SWEEP_INTERVAL_MS - 1);
    expect(inputs.length).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(inputs.length).toBe(2);
    await stop();
    await vi.advanceTimersByTimeAsync(10 * DEFAULT_SWEEP_INTERVAL_MS);
    expect(inputs.length).toBe(2);
  });

  it('sweeps every tenant by default and only the named one when told', async () => {
    const all = recordingPlane();
    await startSweeper(all.plane, { intervalMs: 1000 })();
    expect(all.inputs).toEqual([{}]);
    const one = recordingPlane();
    await startSweeper(one.plane, { intervalMs: 1000, tenant: 'acme' })();
    expect(one.inputs).toEqual([{ tenant: 'acme' }]);
  });

  it('a failed sweep without onError becomes a process warning naming the failure', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const { plane } = recordingPlane(true);
      await startSweeper(plane, { intervalMs: 1000 })();
      expect(warn).toHaveBeenCalledWith('quotaplane sweep failed: Error: store down');
    } finally {
      warn.mockRestore();
    }
  });

  it('on a real plane, the tenant option leaves other tenants alone', async () => {
    fixture = await memoryPlane({ leaseMs: 1000 });
    const { plane, clock } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    await plane.admit({ tenant: 'globex', run: 'run-g' });
    clock.advance(1000);
    const results: SweepResult[] = [];
    await startSweeper(plane, { intervalMs: 1000, tenant: 'globex', onSweep: (result) => results.push(result) })();
    expect(results[0]?.swept.map((run) => run.tenant)).toEqual(['globex']);
    expect((await plane.slotHolders({ tenant: 'acme' })).runs).toEqual(['run-a']);
  });
});
