import { performance } from 'node:perf_hooks';

import type { BenchRow, SliceMeter } from './bench-types.js';
import { perDecision } from './per-decision.js';
import { type Counters, metered } from './slice-counters.js';

/**
 * One call of a concurrent contender, made by caller number `caller` (0 … callers − 1). It answers
 * how long the part whose latency is reported took, in ms (for an admission cycle: the `admit`
 * alone, not the settle that follows it).
 */
export type CallerCall = (caller: number) => Promise<number>;

/** What one contender did over every timed slice: calls, wall seconds, and each call's latency (ms). */
export interface ConcurrentResult {
  readonly operations: number;
  readonly seconds: number;
  readonly latenciesMs: readonly number[];
  /** What the meter counted over this contender's slices (empty without a meter). */
  readonly counters: Readonly<Counters>;
}

/**
 * Times contenders that each run `callers` callers at once (one async loop per caller, awaiting
 * its own calls one after another). Like `interleavedLoops`, it warms every contender up untimed
 * (`warmupPerCaller` calls per caller), then runs `rounds` rounds in which each contender in turn
 * gets `loopMs / rounds` of wall time, so background load on a shared machine falls on all of them
 * alike. A slice ends when every caller has seen the deadline pass; its wall time includes the
 * calls still in flight then, so no work is counted without its time. With a `meter`, each slice
 * is read before and after (outside its wall time) and the differences go to its contender.
 */
export async function concurrentInterleavedLoops(
  contenders: readonly CallerCall[],
  callers: number,
  loopMs: number,
  rounds = 5,
  warmupPerCaller = 50,
  meter?: SliceMeter,
): Promise<ConcurrentResult[]> {
  const callerIds = Array.from({ length: callers }, (_, caller) => caller);
  for (const call of contenders) {
    await Promise.all(
      callerIds.map(async (caller) => {
        for (let index = 0; index < warmupPerCaller; index += 1) await call(caller);
      }),
    );
  }
  const totals = contenders.map(() => ({ operations: 0, seconds: 0, latenciesMs: [] as number[], counters: {} as Counters }));
  const sliceMs = loopMs / rounds;
  for (let round = 0; round < rounds; round += 1) {
    for (const [index, call] of contenders.entries()) {
      const total = totals[index] as { operations: number; seconds: number; latenciesMs: number[]; counters: Counters };
      await metered(meter, total.counters, async () => {
        const started = performance.now();
        const deadline = started + sliceMs;
        const done = await Promise.all(
          callerIds.map(async (caller) => {
            let calls = 0;
            while (performance.now() < deadline) {
              total.latenciesMs.push(await call(caller));
              calls += 1;
            }
            return calls;
          }),
        );
        total.operations += done.reduce((sum, calls) => sum + calls, 0);
        total.seconds += (performance.now() - started) / 1000;
      });
    }
  }
  return totals;
}

/** The `fraction` quantile (0 … 1) of latencies in ms, nearest rank, to 0.01 ms; 0 when there are none. */
export function quantileMs(latenciesMs: readonly number[], fraction: number): number {
  if (latenciesMs.length === 0) return 0;
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1));
  return Math.round((sorted[rank] as number) * 100) / 100;
}

/**
 * The row of one contender of {@link concurrentInterleavedLoops}: its operations, rate, latency
 * quantiles of `of` (ms), and its costs per decision when a meter measured them (`commits`
 * decisions an operation; `null` when the section does not count them). Every section that times
 * contenders with it builds its rows here.
 */
export function concurrentRow(section: string, name: string, result: ConcurrentResult, commits: number | null, of: string, note: string): BenchRow {
  return {
    section,
    name,
    operations: result.operations,
    seconds: result.seconds,
    perSecond: result.seconds > 0 ? Math.round(result.operations / result.seconds) : 0,
    commitsPerOperation: commits,
    latency: { of, p50Ms: quantileMs(result.latenciesMs, 0.5), p99Ms: quantileMs(result.latenciesMs, 0.99) },
    // Only a metered contender has counters; one measured without a meter shows no cost columns.
    perDecision: commits === null || Object.keys(result.counters).length === 0 ? undefined : perDecision(result.counters, result.operations, commits),
    note,
  };
}
