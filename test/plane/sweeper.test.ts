import { afterEach, describe, expect, it } from 'vitest';

import type { SweepResult } from '../../src/plane/operator-types.js';
import { startSweeper } from '../../src/plane/sweeper.js';
import { memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

describe('startSweeper sweeps lapsed leases on an interval (docs/design/decisions.md "A dead process strands its run")', () => {
  it('sweeps at the plane clock, again after each interval, and stops when told', async () => {
    fixture = await memoryPlane({ leaseMs: 1000 });
    const { plane, clock } = fixture;
    await plane.admit({ tenant: 'acme', run: 'run-a' });
    clock.set(T0 + 1000);

    const results: SweepResult[] = [];
    let thirdSweep: () => void = () => undefined;
    const third = new Promise<void>((resolve) => {
      thirdSweep = resolve;
    });
    const stop = startSweeper(plane, {
      intervalMs: 1,
      onSweep: (result) => {
        results.push(result);
        if (results.length === 3) thirdSweep();
      },
    });
    await third;
    await stop();
    const count = results.length;

    expect(results[0]).toEqual({ atMs: T0 + 1000, swept: [{ tenant: 'acme', run: 'run-a', releasedSlot: true, stranded: true }] });
    expect(results[1]?.swept).toEqual([]);
    expect((await plane.runs({ tenant: 'acme' })).runs[0]).toMatchObject({ status: 'stranded', holdsSlot: false });
    // Stopped means stopped: no sweep runs after stop() resolved.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(results.length).toBe(count);
  });

  it('reports a failed sweep to onError and carries on', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const errors: unknown[] = [];
    let failedTwice: () => void = () => undefined;
    const twice = new Promise<void>((resolve) => {
      failedTwice = resolve;
    });
    await fixture.store.close();
    const stop = startSweeper(plane, {
      intervalMs: 1,
      onError: (error) => {
        errors.push(error);
        if (errors.length === 2) failedTwice();
      },
    });
    await twice;
    await stop();
    expect(errors[0]).toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('refuses an interval that is not a positive integer', async () => {
    fixture = await memoryPlane();
    expect(() => startSweeper(fixture.plane, { intervalMs: 0 })).toThrow(/intervalMs/);
  });
});
