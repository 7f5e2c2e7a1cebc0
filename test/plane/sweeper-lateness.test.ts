import { afterEach, describe, expect, it, vi } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import type { SweepInput, SweepResult } from '../../src/plane/operator-types.js';
import type { Plane } from '../../src/plane/plane.js';
import { startSweeper, type SweepTiming } from '../../src/plane/sweeper.js';
import type { SweptRun } from '../../src/store/types.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { memoryPlane, observedStore, T0, type MemoryPlane } from './plane-fixtures.js';

// How late a lapsed slot is freed (sweeper.ts SweepTiming): sweeps start one interval apart, however
// long each takes, so a slot whose lease lapsed is freed within the interval plus one sweep's
// duration; and the runs of one page are swept side by side, so a sweep under load waits for the
// store's group commit once, not once per run. Fake timers: nothing here asserts how fast.

let fixture: MemoryPlane | undefined;
afterEach(async () => {
  await fixture?.close();
  fixture = undefined;
  vi.useRealTimers();
});

// A plane whose every sweep takes `sweepMs` of (fake) time; `starts` holds when each one started.
function slowPlane(sweepMs: number): { plane: Plane; starts: number[] } {
  const starts: number[] = [];
  const plane = {
    sweep: async (_input?: SweepInput): Promise<SweepResult> => {
      starts.push(Date.now());
      await new Promise((resolve) => setTimeout(resolve, sweepMs));
      return { atMs: Date.now(), swept: [] };
    },
  } as unknown as Plane;
  return { plane, starts };
}

// Moves the fake timers `ms` forward 1 ms at a time, letting the SQLite store's group commit (real
// setImmediate turns) finish what each step started.
async function advance(ms: number): Promise<void> {
  for (let step = 0; step < ms; step += 1) {
    await vi.advanceTimersByTimeAsync(1);
    for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('startSweeper: sweeps start one interval apart, so a lapsed slot waits at most the interval plus one sweep', () => {
  it('a sweep of 300 ms at an interval of 500 ms: the next starts 500 ms after the previous started, not 500 ms after it ended', async () => {
    vi.useFakeTimers({ now: 0 });
    const { plane, starts } = slowPlane(300);
    const timings: SweepTiming[] = [];
    const stop = startSweeper(plane, { intervalMs: 500, nowMs: () => Date.now(), onSweep: (_result, timing) => timings.push(timing) });
    await vi.advanceTimersByTimeAsync(499);
    expect(starts).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(starts).toEqual([0, 500]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(starts).toEqual([0, 500, 1_000, 1_500]);
    const stopping = stop();
    await vi.advanceTimersByTimeAsync(300);
    await stopping;
    // A lease that lapsed just after the sweep at 0 started is freed by the one that ends at 800:
    // the bound is the interval plus that sweep's 300 ms; the first sweep has no previous one.
    expect(timings.slice(0, 3)).toEqual([
      { durationMs: 300, lagBoundMs: null },
      { durationMs: 300, lagBoundMs: 800 },
      { durationMs: 300, lagBoundMs: 800 },
    ]);
  });

  it('a sweep longer than the interval is followed by the next at once (after the least delay of a timer, 1 ms), never by a further pause', async () => {
    vi.useFakeTimers({ now: 0 });
    const { plane, starts } = slowPlane(700);
    const stop = startSweeper(plane, { intervalMs: 500, nowMs: () => Date.now() });
    await vi.advanceTimersByTimeAsync(1_402);
    expect(starts).toEqual([0, 701, 1_402]);
    const stopping = stop();
    await vi.advanceTimersByTimeAsync(700);
    await stopping;
  });

  it('after a failed sweep, the bound runs from the last sweep that completed', async () => {
    vi.useFakeTimers({ now: 0 });
    let calls = 0;
    const plane = {
      sweep: async (): Promise<SweepResult> => {
        calls += 1;
        if (calls === 2) throw new Error('store down');
        return { atMs: Date.now(), swept: [] };
      },
    } as unknown as Plane;
    const timings: SweepTiming[] = [];
    const stop = startSweeper(plane, { intervalMs: 500, nowMs: () => Date.now(), onSweep: (_result, timing) => timings.push(timing), onError: () => undefined });
    await vi.advanceTimersByTimeAsync(1_000);
    await stop();
    expect(timings).toEqual([
      { durationMs: 0, lagBoundMs: null },
      { durationMs: 0, lagBoundMs: 1_000 },
    ]);
  });

  it('on a plane whose clock moves with the timers: a lease that lapses 1 ms after a sweep looked is freed by the next sweep, one interval later', async () => {
    vi.useFakeTimers({ now: 0, toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    fixture = await memoryPlane({ leaseMs: 1_000 });
    const plane = createPlane({ store: fixture.store, clock: { nowMs: () => T0 + Date.now() }, leaseMs: 1_000 });
    await advance(1);
    // Admitted at T0 + 1: the lease lapses at T0 + 502, 1 ms after the sweep at 501 looked.
    expect(await plane.admit({ tenant: 'acme', run: 'run-dead', leaseMs: 501 })).toMatchObject({ ok: true, leaseExpiresAtMs: T0 + 502 });
    const swept: { atMs: number; runs: string[] }[] = [];
    const stop = startSweeper(plane, {
      intervalMs: 500,
      nowMs: () => Date.now(),
      onSweep: (result) => swept.push({ atMs: result.atMs - T0, runs: result.swept.map((run) => run.run) }),
    });
    await advance(1_499);
    await stop();
    expect(swept).toEqual([
      { atMs: 1, runs: [] },
      { atMs: 501, runs: [] },
      { atMs: 1_001, runs: ['run-dead'] },
    ]);
  });
});

describe('plane.sweep: the runs of one page are swept side by side', () => {
  it('every lapsed run of the page is in flight at once, each in its own transaction; a fault fails the sweep once all are answered', async () => {
    fixture = await memoryPlane({ leaseMs: 1_000 });
    for (const run of ['run-a', 'run-b', 'run-c']) await fixture.plane.admit({ tenant: 'acme', run });
    let failing: string | null = null;
    let inFlight = 0;
    let most = 0;
    const { store } = observedStore(fixture.store);
    const counting = {
      ...store,
      tenant: (tenant: string) =>
        new Proxy(store.tenant(tenant), {
          get(target, property, receiver) {
            if (property !== 'sweepRun') return Reflect.get(target, property, receiver) as unknown;
            return async (request: { run: string; atMs: number }): Promise<SweptRun> => {
              if (failing === request.run) throw new QuotaError('STORE_UNAVAILABLE', `could not sweep ${request.run}`);
              inFlight += 1;
              most = Math.max(most, inFlight);
              try {
                return await target.sweepRun(request);
              } finally {
                inFlight -= 1;
              }
            };
          },
        }),
    };
    const plane = createPlane({ store: counting, clock: fixture.clock });
    fixture.clock.set(T0 + 1_000);
    const result = await plane.sweep();
    expect(result.swept.map((swept) => swept.run)).toEqual(['run-a', 'run-b', 'run-c']);
    expect(most).toBe(3);

    // A fault of one run fails the sweep, after the others of its page were swept.
    for (const run of ['run-d', 'run-e', 'run-f']) await fixture.plane.admit({ tenant: 'acme', run });
    fixture.clock.set(T0 + 2_000);
    failing = 'run-e';
    await expect(plane.sweep()).rejects.toThrow('could not sweep run-e');
    const statuses = (await fixture.plane.runs({ tenant: 'acme' })).runs.map((run) => [run.run, run.status]);
    expect(statuses).toEqual(expect.arrayContaining([['run-d', 'stranded'], ['run-e', 'running'], ['run-f', 'stranded']]));
  });
});
