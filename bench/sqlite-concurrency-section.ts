import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

import { createPlane } from '../src/plane/create-plane.js';
import { openStore } from '../src/store/open-store.js';
import type { BenchContext, BenchRow, BenchSection } from './bench-types.js';
import { type CallerCall, concurrentInterleavedLoops, concurrentRow, type ConcurrentResult } from './concurrent-loop.js';
import { sqliteMeter } from './sqlite-meter.js';
import { openRateLimiterPeer } from './sqlite-peer.js';

/** Concurrent callers in one process the section measures. */
export const SQLITE_CALLER_COUNTS = [1, 8, 64, 256] as const;

/**
 * The SQLite concurrency section: admission cycles (admit + settle, two durable decisions) from
 * 1, 8, 64 and 256 concurrent callers in one process on a durable file, each caller its own
 * tenant, next to rate-limiter-flexible's `consume()` from as many callers (one key each) on a
 * file with the same settings, interleaved in the same run. Group commit lets concurrent decisions
 * share one WAL sync; the peer syncs once per consume. Costs per decision from `sqlite-meter.ts`;
 * `--quick` runs 1 and 8 callers only.
 */
export const sqliteConcurrencySection: BenchSection = {
  name: 'sqlite-concurrency',
  async run(context: BenchContext): Promise<BenchRow[]> {
    const rows: BenchRow[] = [];
    const meter = sqliteMeter();
    for (const callers of context.quick ? SQLITE_CALLER_COUNTS.filter((count) => count <= 8) : SQLITE_CALLER_COUNTS) {
      const directory = await mkdtemp(join(tmpdir(), 'quotaplane-bench-conc-'));
      const store = await openStore(`sqlite:${join(directory, 'quotaplane.db')}`);
      const peer = await openRateLimiterPeer(join(directory, 'rate-limiter-flexible.db'));
      try {
        context.log(`sqlite-concurrency: ${callers} caller(s), quotaplane cycle and rate-limiter-flexible consume(), interleaved`);
        const plane = createPlane({ store });
        const tenants = Array.from({ length: callers }, (_, caller) => `bench-${caller}`);
        for (const tenant of tenants) {
          await plane.setQuota(tenant, { period: 'daily', maxConcurrentRuns: 4, maxTokensPerPeriod: 1_000_000_000_000 }, { newTenant: true });
        }
        const budget = { maxTokens: 2_000, maxCallTokens: 1_000 };
        const cycle: CallerCall = async (caller) => {
          const tenant = tenants[caller] as string;
          const started = performance.now();
          const pass = await plane.admit({ tenant, budget, width: 1 });
          const admitMs = performance.now() - started;
          if (!pass.ok) throw new Error(`the bench admission was refused: ${pass.message}`);
          await plane.settle({ tenant, run: pass.run, epoch: pass.epoch, spend: { tokens: 700, minorUnits: 0 }, concludes: true });
          return admitMs;
        };
        const consume: CallerCall = async (caller) => {
          const started = performance.now();
          await peer.limiter.consume(`bench-${caller}`, 1);
          return performance.now() - started;
        };
        const [cycles, consumes] = (await concurrentInterleavedLoops([cycle, consume], callers, context.loopMs, 5, callers > 64 ? 5 : 20, meter)) as [
          ConcurrentResult,
          ConcurrentResult,
        ];
        const ratio = consumes.operations > 0 ? cycles.operations / cycles.seconds / (consumes.operations / consumes.seconds) : 0;
        rows.push(
          concurrentRow('sqlite-concurrency', `quotaplane admit + settle (cycle), ${callers} caller(s)`, cycles, 2, 'admit', `${ratio.toFixed(2)}× rlf consumes/s; group commit, WAL, synchronous=FULL`),
          concurrentRow('sqlite-concurrency', `rate-limiter-flexible consume(), ${callers} caller(s)`, consumes, 1, 'consume', 'RateLimiterSQLite, same pragmas'),
        );
      } finally {
        peer.db.close();
        await store.close();
        await rm(directory, { recursive: true, force: true });
      }
    }
    return rows;
  },
};
