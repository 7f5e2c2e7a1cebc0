import assert from 'node:assert/strict';

import type { TenantStore } from '../../store/store.js';
import type { AdmitRequest } from '../../store/types.js';
import type { WaitOutcome, WaitTerms } from '../../store/waiters.js';
import { admission, configure, JAN_MS, tokens } from './fixtures.js';
import type { ConformanceGroup } from './types.js';

// A waiter's grant that lapsed before its caller collected it (store.ts `sweepRun`,
// `collectWaiter`; docs/design/rules.md#w18, #w19): withdrawn whole, the waiter back in its own
// place and served afresh, never a stranded run its caller is told to settle.

const QUOTA = { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 1_000_000 } as const;
const BUDGET = { maxTokens: 100, maxCallTokens: 10 };
const HOLD = { tokens: 110, minorUnits: 0 };
const GRANT_LEASE_MS = 1_000;
const TERMS: WaitTerms = { untilMs: JAN_MS + 60_000, leaseMs: 10_000 };
const ask = (run: string, atMs: number): AdmitRequest => admission(run, { budget: BUDGET, width: 1, atMs, leaseMs: GRANT_LEASE_MS });

// r1 runs; r2 waits; r1 concludes at JAN_MS + 100, granting r2 a pass whose lease lapses at JAN_MS + 1 100.
async function grantWhileAway(handle: TenantStore): Promise<void> {
  await configure(handle, QUOTA);
  assert.ok((await handle.admit(admission('r1', { budget: BUDGET, width: 1, leaseMs: 60_000 }))).ok, 'admit r1');
  const waiting: WaitOutcome = await handle.admitOrWait(ask('r2', JAN_MS + 10), TERMS);
  assert.ok(!waiting.ok && 'waiting' in waiting, 'r2 waits');
  await handle.settlePass({ run: 'r1', epoch: 1, spend: tokens(5), concludes: true, atMs: JAN_MS + 100 });
  assert.deepEqual(await handle.runningRuns(10), ['r2'], 'r2 is granted the slot');
}

/** W18–W19: a grant that lapsed uncollected goes back, and its waiter keeps its place. */
export const lapsedGrants: ConformanceGroup = {
  title: 'a waiter whose grant lapsed before it collected it keeps its place and is served afresh',
  steps: [
    {
      id: 'W18',
      title: 'the sweep of a lapsed uncollected grant withdraws it (slot and hold) and grants its waiter afresh in its place; nothing is stranded',
      async run(context) {
        const handle = context.store.tenant('lapsed-sweep');
        await grantWhileAway(handle);
        const swept = await handle.sweepRun({ run: 'r2', atMs: JAN_MS + 5_000 });
        assert.deepEqual(swept, { run: 'r2', releasedSlot: true, stranded: false }, 'sweepRun');
        const runs = await handle.runs({ limit: 10 });
        assert.deepEqual(
          runs.map((run) => [run.run, run.status, run.admittedAtMs, run.leaseExpiresAtMs]),
          [
            ['r1', 'concluded', JAN_MS, JAN_MS + 60_000],
            ['r2', 'running', JAN_MS + 5_000, JAN_MS + 6_000],
          ],
          'r2 granted afresh at the sweep, nothing stranded',
        );
        assert.deepEqual(await handle.reservations(10), [{ run: 'r2', period: '2026-01', remaining: HOLD }], 'one hold, the fresh grant’s');
        const collected = await handle.collectWaiter(ask('r2', JAN_MS + 5_500), TERMS);
        assert.deepEqual(collected, { ok: true, run: 'r2', epoch: 1, period: '2026-01', hold: HOLD, leaseExpiresAtMs: JAN_MS + 6_000 }, 'the collect');
      },
    },
    {
      id: 'W19',
      title: 'a caller collecting after its grant lapsed, before any sweep, is granted afresh, never told to settle a pass it never received',
      async run(context) {
        const handle = context.store.tenant('lapsed-collect');
        await grantWhileAway(handle);
        const collected = await handle.collectWaiter(ask('r2', JAN_MS + 7_000), TERMS);
        assert.deepEqual(collected, { ok: true, run: 'r2', epoch: 1, period: '2026-01', hold: HOLD, leaseExpiresAtMs: JAN_MS + 8_000 }, 'the collect');
        assert.equal((await handle.getRun('r2'))?.admittedAtMs, JAN_MS + 7_000, 'admitted when the collect granted it');
        assert.deepEqual(await handle.waitQueue({ atMs: JAN_MS + 7_000 }), { depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 }, 'the queue');
      },
    },
  ],
};
