import assert from 'node:assert/strict';

import { assertOk, assertRefused, assertRejectsWith } from './assertions.js';
import { ACME, admission, configure, dispatchKey, JAN_MS, LEASE_MS, runId, slotQuota, T_MS, tokens } from './fixtures.js';
import { summaryOf } from './leases.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// The sweep of lapsed leases (store.ts `lapsedRuns`, `sweepRun`; docs/design/rules.md#l49–#l55).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };
const DEAD = runId(700);
const ALIVE = runId(701);
const RESUMED = runId(702);
const RAW = runId(703);
const NEXT = runId(704);
const LAPSE_MS = JAN_MS + LEASE_MS;

/** L49–L55: lapsed leases are found, their slots freed and holds kept; late settles and resumes still work. */
export const sweepLapsedLeases: ConformanceGroup = {
  title: 'the sweep frees the slots of lapsed leases and keeps their holds',
  steps: [
    {
      id: 'L49',
      title: 'lapsedRuns lists registered slot holders and running runs with no live pass, from the lease expiry instant on',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 3, maxTokensPerPeriod: 100_000 });
        assertOk(await handle.admit(admission(DEAD, { budget: BUDGET })), 'admit DEAD');
        assertOk(await handle.admit(admission(ALIVE, { budget: BUDGET })), 'admit ALIVE');
        assertOk(await handle.admit(admission(RESUMED, { budget: BUDGET })), 'admit RESUMED');
        await handle.settlePass({ run: RESUMED, epoch: 1, spend: tokens(10), concludes: false, atMs: JAN_MS + 1 });
        assertOk(await handle.resume({ run: RESUMED, atMs: JAN_MS + 2, leaseMs: LEASE_MS - 2 }), 'resume RESUMED (no slot)');
        assertOk(await handle.heartbeat({ run: ALIVE, epoch: 1, atMs: JAN_MS + 30_000, leaseMs: LEASE_MS }), 'ALIVE beats');
        // A slot taken through the raw primitive has no pass and no lease: the sweep never touches it.
        assert.deepEqual(await handle.reserve({ run: RAW, quota: slotQuota(10), atMs: JAN_MS }), { ok: true }, 'raw reserve');
        assert.deepEqual(await handle.lapsedRuns({ atMs: LAPSE_MS - 1, limit: 10 }), [], 'one ms before the leases lapse');
        assert.deepEqual(await handle.lapsedRuns({ atMs: LAPSE_MS, limit: 10 }), [DEAD, RESUMED], 'at the lapse instant');
        assert.deepEqual(await handle.lapsedRuns({ atMs: LAPSE_MS, limit: 1 }), [DEAD], 'limit 1');
        assert.deepEqual(await handle.lapsedRuns({ atMs: LAPSE_MS, after: DEAD, limit: 10 }), [RESUMED], 'after DEAD');
      },
    },
    {
      id: 'L50',
      title: 'sweepRun releases the slot, keeps the hold and strands the run since its lease lapsed; a second sweep does nothing',
      async run(context) {
        const handle = acme(context);
        const sweepAtMs = LAPSE_MS + 5000;
        const holdsBefore = await handle.reservations(100);
        assert.deepEqual(await handle.sweepRun({ run: DEAD, atMs: sweepAtMs }), { run: DEAD, releasedSlot: true, stranded: true }, 'sweep DEAD');
        assert.deepEqual(
          await handle.sweepRun({ run: RESUMED, atMs: sweepAtMs }),
          { run: RESUMED, releasedSlot: false, stranded: true },
          'sweep RESUMED (it held no slot)',
        );
        assert.deepEqual(await handle.runningRuns(100), [ALIVE, RAW], 'runningRuns after the sweep');
        assert.deepEqual(await handle.reservations(100), holdsBefore, 'every hold is kept');
        const dead = await summaryOf(handle, DEAD);
        assert.equal(dead.status, 'stranded', 'status');
        assert.equal(dead.statusSinceMs, LAPSE_MS, 'stranded since the lease lapsed');
        assert.equal(dead.holdsSlot, false, 'holdsSlot');
        assert.deepEqual(await handle.sweepRun({ run: DEAD, atMs: sweepAtMs + 1 }), { run: DEAD, releasedSlot: false, stranded: false }, 'again');
        assert.deepEqual(await handle.lapsedRuns({ atMs: sweepAtMs + 1, limit: 10 }), [], 'nothing left to sweep');
      },
    },
    {
      id: 'L51',
      title: 'sweepRun re-checks: a run with a live lease, or an unknown run, is left as it was',
      async run(context) {
        const handle = acme(context);
        assert.deepEqual(await handle.sweepRun({ run: ALIVE, atMs: LAPSE_MS + 5000 }), { run: ALIVE, releasedSlot: false, stranded: false }, 'ALIVE');
        assert.deepEqual(await handle.sweepRun({ run: runId(799), atMs: LAPSE_MS }), { run: runId(799), releasedSlot: false, stranded: false }, 'unknown');
        assert.deepEqual(await handle.sweepRun({ run: RAW, atMs: LAPSE_MS }), { run: RAW, releasedSlot: false, stranded: false }, 'raw slot');
        assert.equal((await handle.getRun(ALIVE))?.status, 'running', 'ALIVE status');
        assert.deepEqual(await handle.runningRuns(100), [ALIVE, RAW], 'runningRuns');
      },
    },
    {
      id: 'L52',
      title: 'the freed slot admits the next run at the ceiling',
      async run(context) {
        const handle = acme(context);
        assertOk(await handle.admit(admission(NEXT, { budget: BUDGET, atMs: LAPSE_MS + 6000 })), 'admit NEXT into the freed slot');
        assert.equal(await handle.running(), 3, 'running');
        const full = await handle.admit(admission(runId(705), { budget: BUDGET, atMs: LAPSE_MS + 6000 }));
        assertRefused(full, 'TooManyRuns', { running: 3, limit: 3 }, 'a fourth admission');
      },
    },
    {
      id: 'L53',
      title: 'a stranded pass cannot beat or dispatch, but its late settle is accepted exactly once and frees no other slot',
      async run(context) {
        const handle = acme(context);
        const at = LAPSE_MS + 7000;
        await assertRejectsWith(() => handle.heartbeat({ run: DEAD, epoch: 1, atMs: at, leaseMs: LEASE_MS }), 'CONFLICT', 'heartbeat');
        await assertRejectsWith(
          () =>
            handle.dispatch({ run: DEAD, grant: 'tool://x/y', dispatch: dispatchKey(1), ceilings: [], exempt: false, atMs: at, epoch: 1, leaseMs: LEASE_MS }),
          'CONFLICT',
          'dispatch',
        );
        const late = { run: DEAD, epoch: 1, spend: tokens(250), concludes: true, atMs: at };
        const settled = await handle.settlePass(late);
        assert.deepEqual(
          settled,
          {
            outcome: 'settled',
            receipt: { run: DEAD, epoch: 1, period: '2026-01', spend: tokens(250), releaseSlot: true, concludes: true },
            overrun: tokens(0),
          },
          'the late settle',
        );
        assert.equal((await handle.settlePass({ ...late, atMs: at + 1 })).outcome, 'already-settled', 'its retry');
        assert.deepEqual(await handle.spent('2026-01'), tokens(260), 'spent counts the late settle once');
        assert.deepEqual(await handle.runningRuns(100), [ALIVE, RAW, NEXT], 'no other slot was released');
        assert.equal((await handle.getRun(DEAD))?.status, 'concluded', 'status');
        assert.equal((await handle.reservations(100)).some((hold) => hold.run === DEAD), false, 'the concluded hold is gone');
      },
    },
    {
      id: 'L54',
      title: 'a stranded run resumes like any other: a new epoch, no slot, running again',
      async run(context) {
        const handle = acme(context);
        const pass = assertOk(await handle.resume({ run: RESUMED, atMs: LAPSE_MS + 8000, leaseMs: LEASE_MS }), 'resume');
        assert.equal(pass.epoch, 3, 'epoch');
        assert.deepEqual(pass.hold, tokens(990), 'the hold the sweep kept');
        const summary = await summaryOf(handle, RESUMED);
        assert.equal(summary.status, 'running', 'status');
        assert.equal(summary.holdsSlot, false, 'holdsSlot');
      },
    },
    {
      id: 'L55',
      title: 'a slot left behind by an unsettled admission pass is swept once no pass of the run is live',
      async run(context) {
        const handle = context.store.tenant('leaky');
        const run = runId(710);
        assertOk(await handle.admit(admission(run, { atMs: T_MS })), 'admit');
        // A recovery resumes while pass 1 still holds the slot, then settles; pass 1 never does.
        assertOk(await handle.resume({ run, atMs: T_MS + 1, leaseMs: LEASE_MS }), 'resume');
        await handle.settlePass({ run, epoch: 2, spend: tokens(0), concludes: false, atMs: T_MS + 2 });
        assert.deepEqual(await handle.lapsedRuns({ atMs: T_MS + LEASE_MS - 1, limit: 10 }), [], 'pass 1 is still live');
        assert.deepEqual(await handle.lapsedRuns({ atMs: T_MS + LEASE_MS, limit: 10 }), [run], 'pass 1 lapsed');
        assert.deepEqual(await handle.sweepRun({ run, atMs: T_MS + LEASE_MS }), { run, releasedSlot: true, stranded: false }, 'sweep');
        assert.equal((await handle.getRun(run))?.status, 'paused', 'a paused run stays paused');
        assert.equal(await handle.running(), 0, 'running');
      },
    },
  ],
};
