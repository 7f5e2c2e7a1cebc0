import { afterEach, describe, expect, it, vi } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import type { Plane } from '../../src/plane/plane.js';
import type { PruneInput, PruneResult } from '../../src/plane/prune-types.js';
import { DEFAULT_PRUNE_INTERVAL_MS, startPruner } from '../../src/plane/pruner.js';
import { memoryPlane, type MemoryPlane } from './plane-fixtures.js';

// startPruner (retention): its bounds, its schedule, who it prunes as, and that
// stopping ends a prune in flight. The HTTP `serve --prune-older-than` tests reach it through a
// server; these reach it in process, so the mutation set sees it too.

const DAY_MS = 86_400_000;

let fixture: MemoryPlane | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  vi.useRealTimers();
});

// A plane whose prune records what it was asked and answers at once (or fails when told to).
function recordingPlane(fail = false): { plane: Plane; inputs: PruneInput[] } {
  const inputs: PruneInput[] = [];
  const plane = {
    prune: async (input: PruneInput): Promise<PruneResult> => {
      inputs.push(input);
      if (fail) throw new Error('store down');
      const none = { runs: 0, passes: 0, receipts: 0, rateDispatches: 0 };
      return { atMs: 1, olderThanMs: input.olderThanMs, dryRun: false, closedAtOrBeforeMs: 0, rateAtOrBeforeMs: 0, tenants: [], total: none, stopped: false };
    },
  } as unknown as Plane;
  return { plane, inputs };
}

function thrown(action: () => unknown): QuotaError {
  try {
    action();
  } catch (error) {
    if (error instanceof QuotaError) return error;
    throw error;
  }
  throw new Error('expected a QuotaError');
}

describe('startPruner: arguments', () => {
  it('refuses an age that is not a positive whole number of ms, naming olderThanMs', () => {
    const { plane } = recordingPlane();
    for (const bad of [0, -1, 1.5, '90d', undefined]) {
      const error = thrown(() => startPruner(plane, { olderThanMs: bad as never }));
      expect(error.details.field).toBe('olderThanMs');
      expect(error.message).toMatch(/^olderThanMs: must be an age in milliseconds, a positive integer, got /);
    }
  });

  it('refuses an interval outside 1 ms … 2^31 − 1 ms, naming intervalMs', async () => {
    const { plane } = recordingPlane();
    for (const bad of [0, 2 ** 31, 2.5]) {
      expect(thrown(() => startPruner(plane, { olderThanMs: DAY_MS, intervalMs: bad })).details.field).toBe('intervalMs');
    }
    await startPruner(plane, { olderThanMs: DAY_MS, intervalMs: 2 ** 31 - 1 })();
    // The smallest age there is, and no onPrune: a prune that answers is no error.
    const errors: unknown[] = [];
    await new Promise<void>((resolve) => {
      const stop = startPruner(plane, { olderThanMs: 1, onError: (error) => errors.push(error) });
      setImmediate(() => void stop().then(resolve));
    });
    expect(errors).toEqual([]);
  });
});

describe('startPruner: schedule', () => {
  it('prunes at once as quotaplane-pruner, then an hour after each prune ends, and not after stop', async () => {
    vi.useFakeTimers();
    expect(DEFAULT_PRUNE_INTERVAL_MS).toBe(3_600_000);
    const { plane, inputs } = recordingPlane();
    const results: PruneResult[] = [];
    const stop = startPruner(plane, { olderThanMs: DAY_MS, onPrune: (result) => results.push(result) });
    await vi.advanceTimersByTimeAsync(0);
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({ olderThanMs: DAY_MS, by: { actor: 'quotaplane-pruner', basis: 'asserted' } });
    expect(inputs[0]?.signal?.aborted).toBe(false);
    expect(results).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(DEFAULT_PRUNE_INTERVAL_MS - 1);
    expect(inputs).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(inputs).toHaveLength(2);
    await stop();
    expect(inputs[1]?.signal?.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(10 * DEFAULT_PRUNE_INTERVAL_MS);
    expect(inputs).toHaveLength(2);
  });

  it('prunes as the operator it is given; a failed prune goes to onError, or else to a process warning', async () => {
    const ops = { actor: 'ops-alice', basis: 'asserted' } as const;
    const given = recordingPlane();
    await startPruner(given.plane, { olderThanMs: DAY_MS, by: ops })();
    expect(given.inputs[0]?.by).toEqual(ops);
    const failing = recordingPlane(true);
    const errors: unknown[] = [];
    await startPruner(failing.plane, { olderThanMs: DAY_MS, onError: (error) => errors.push(error) })();
    expect(String(errors[0])).toBe('Error: store down');
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      await startPruner(failing.plane, { olderThanMs: DAY_MS })();
      expect(warn).toHaveBeenCalledWith('quotaplane prune failed: Error: store down');
    } finally {
      warn.mockRestore();
    }
  });

  it('on a real plane, removes a run concluded longer ago than the age and keeps a newer one', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    for (const run of ['run-old', 'run-new']) {
      const pass = await plane.admit({ tenant: 'acme', run });
      if (!pass.ok) throw new Error('admission refused');
      await plane.settle({ tenant: 'acme', run, epoch: pass.epoch, spend: { tokens: 1, minorUnits: 0 }, concludes: true });
      clock.advance(2 * DAY_MS);
    }
    const pruned = new Promise<PruneResult>((resolve) => {
      const stop = startPruner(plane, { olderThanMs: 3 * DAY_MS, onPrune: (result) => void stop().then(() => resolve(result)) });
    });
    const result = await pruned;
    expect(result).toMatchObject({ stopped: false, closedAtOrBeforeMs: clock.nowMs() - 3 * DAY_MS });
    expect(result.total.runs).toBe(1);
    expect((await plane.runs({ tenant: 'acme', statuses: ['concluded'] })).runs.map((run) => run.run)).toEqual(['run-new']);
  });
});
