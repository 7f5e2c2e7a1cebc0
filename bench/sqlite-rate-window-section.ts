import { performance } from 'node:perf_hooks';

import { openStore } from '../src/store/open-store.js';
import type { TenantStore } from '../src/store/store.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { type CallerCall, concurrentInterleavedLoops, concurrentRow, type ConcurrentResult } from './concurrent-loop.js';
import { openRateLimiterPeer } from './sqlite-peer.js';

/** Dispatches already in the window when the measured dispatches run. */
export const WINDOW_FILLS = [0, 10_000, 100_000] as const;

// A daily ceiling far above what the fill and a measured loop can reach (an idle machine runs well
// over 20,000 dispatches a second in memory, so a ceiling of 200,000 a day would fill up on top of
// a 100,000 fill), and a burst ceiling whose count the grant has passed, so the decision does its
// point lookup (the measured dispatches come 2 ms apart: 500 a second).
const CEILINGS = [
  { count: 10_000_000, windowSeconds: 86_400 },
  { count: 1_000, windowSeconds: 1 },
];
const T0 = 1_767_600_000_000;

/**
 * The rate-window section: the cost of one dispatch (`reserveRate` under 10,000,000 a day and
 * 1,000 a second) on an in-memory SQLite store whose grant already holds 0, 10,000 and 100,000 dispatches in
 * the window, next to rate-limiter-flexible's `consume()` on an in-memory database, interleaved.
 * In memory, so the figure is the decision's own cost, not the disk's.
 */
export const sqliteRateWindowSection: BenchSection = {
  name: 'sqlite-rate-window',
  async run(context: BenchContext): Promise<BenchRow[]> {
    const rows: BenchRow[] = [];
    const store = await openStore('sqlite::memory:');
    const peer = await openRateLimiterPeer(':memory:');
    try {
      const acme = store.tenant('bench');
      let key = 0;
      for (const fill of WINDOW_FILLS) {
        const grant = `tool://bench/fill-${fill}`;
        context.log(`sqlite-rate-window: filling ${fill} dispatches`);
        await fillGrant(acme, grant, fill, () => (key += 1));
        let atMs = T0 + 1000;
        const dispatch: CallerCall = async () => {
          const started = performance.now();
          atMs += 2;
          const outcome = await acme.reserveRate({ grant, run: 'bench-run', dispatch: `d-${(key += 1)}`, ceilings: CEILINGS, atMs, exempt: false });
          if (!outcome.ok) throw new Error('the bench dispatch was refused');
          return performance.now() - started;
        };
        const consume: CallerCall = async () => {
          const started = performance.now();
          await peer.limiter.consume('bench', 1);
          return performance.now() - started;
        };
        const [dispatches, consumes] = (await concurrentInterleavedLoops([dispatch, consume], 1, context.loopMs, 5, 50)) as [ConcurrentResult, ConcurrentResult];
        const ratio = dispatches.operations / dispatches.seconds / (consumes.operations / consumes.seconds);
        rows.push(
          concurrentRow('sqlite-rate-window', `quotaplane dispatch, ${fill.toLocaleString('en-US')} in the window`, dispatches, 1, 'dispatch', `${ratio.toFixed(2)}× rlf consumes/s; in memory, 1 caller`),
          concurrentRow('sqlite-rate-window', `rate-limiter-flexible consume(), beside it`, consumes, 1, 'consume', 'RateLimiterSQLite in memory'),
        );
      }
    } finally {
      peer.db.close();
      await store.close();
    }
    return rows;
  },
};

// Fills the grant with `count` dispatches spread over the last hour, in concurrent chunks so group
// commit writes them quickly.
async function fillGrant(acme: TenantStore, grant: string, count: number, nextKey: () => number): Promise<void> {
  const chunk = 1000;
  for (let done = 0; done < count; done += chunk) {
    const size = Math.min(chunk, count - done);
    await Promise.all(
      Array.from({ length: size }, (_, index) =>
        acme.reserveRate({ grant, run: 'fill', dispatch: `f-${nextKey()}`, ceilings: [], atMs: T0 - 3_600_000 + done + index, exempt: false }),
      ),
    );
  }
}
