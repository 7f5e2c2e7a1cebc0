import { performance } from 'node:perf_hooks';

import type { SliceMeter } from './bench-types.js';
import { type Counters, metered } from './slice-counters.js';

/** Operations done and the wall time they took, in seconds. */
export interface LoopResult {
  readonly operations: number;
  readonly seconds: number;
  /** What the meter counted over this operation's slices (empty without a meter). */
  readonly counters: Readonly<Counters>;
}

/** One thing to time: an operation run one call after another. */
export type Operation = () => Promise<void>;

/**
 * Times several operations side by side on a machine others share: after `warmup` untimed calls
 * of each (JIT, statement caches, file growth), it runs `rounds` rounds, and in each round every
 * operation in turn for `loopMs / rounds` of wall time. Interleaving puts every contender under
 * the same background load, so a burst of someone else's disk traffic cannot favour one of them.
 * Calls are sequential on purpose: the figure is one caller's cost per request. With a `meter`,
 * each slice is read before and after (outside its wall time) and the differences go to its operation.
 */
export async function interleavedLoops(
  operations: readonly Operation[],
  loopMs: number,
  rounds = 5,
  warmup = 200,
  meter?: SliceMeter,
): Promise<LoopResult[]> {
  for (const operation of operations) for (let index = 0; index < warmup; index += 1) await operation();
  const totals = operations.map(() => ({ operations: 0, seconds: 0, counters: {} as Counters }));
  const sliceMs = loopMs / rounds;
  for (let round = 0; round < rounds; round += 1) {
    for (const [index, operation] of operations.entries()) {
      const total = totals[index] as { operations: number; seconds: number; counters: Counters };
      await metered(meter, total.counters, async () => {
        const started = performance.now();
        const deadline = started + sliceMs;
        let done = 0;
        // Read the clock every 16 calls so the clock is not what is being measured.
        while (done % 16 !== 0 || performance.now() < deadline) {
          await operation();
          done += 1;
        }
        total.operations += done;
        total.seconds += (performance.now() - started) / 1000;
      });
    }
  }
  return totals;
}

/** Operations per second, rounded. */
export function perSecond(result: LoopResult): number {
  return result.seconds > 0 ? Math.round(result.operations / result.seconds) : 0;
}
