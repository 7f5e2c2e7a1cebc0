import assert from 'node:assert/strict';

import { isQuotaError, type QuotaError } from '../../core/errors.js';
import { MAX_RATE_WINDOW_SECONDS } from '../../core/rate.js';
import type { TenantStore } from '../../store/store.js';
import { assertOk } from './assertions.js';
import { ACME, admission, configure, dispatchKey, GLOBEX, JAN_MS, LEASE_MS, OPS_ALICE, runId, tokens } from './fixtures.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Retention (docs/design/rules.md#r1–#r9): closed runs and what hangs only on them can be pruned by
// age; nothing a decision reads goes, and a pruned run id is refused, never counted again.

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const DAY_MS = 86_400_000;
/** The instant a prune acts at in these cases: 40 days after {@link JAN_MS}. */
const PRUNE_AT_MS = JAN_MS + 40 * DAY_MS;
/** Runs closed at or before this go: 30 days before {@link PRUNE_AT_MS}. */
const CUT_OFF_MS = PRUNE_AT_MS - 30 * DAY_MS;

const OLD_CONCLUDED = runId(1100);
/** Released with its pass never settled: a late settle of that pass is still booked, so it stays. */
const RELEASED_PASS_OPEN = runId(1101);
const RECENT_CONCLUDED = runId(1102);
const PAUSED_WITH_HOLD = runId(1103);
const RUNNING = runId(1104);
const LATE_PASS_OPEN = runId(1105);
/** Paused with every pass settled, then released: nothing of it can settle any more, so it goes. */
const OLD_RELEASED = runId(1106);
const GRANT = 'tool://conformance/retention';

/** Asserts `action` throws the pruned-run `CONFLICT` (`details.pruned`) naming `run`. */
async function assertPrunedConflict(action: () => Promise<unknown>, run: string, what: string): Promise<QuotaError> {
  try {
    const value = await action();
    assert.fail(`${what}: expected CONFLICT for a pruned run, but it resolved with ${JSON.stringify(value)}`);
  } catch (error) {
    if (!isQuotaError(error, 'CONFLICT')) throw error;
    assert.equal(error.details.pruned, true, `${what}: details.pruned (${error.message})`);
    assert.equal(error.details.run, run, `${what}: details.run`);
    assert.match(error.message, /pruned/, `${what}: the message says the run's records were pruned`);
    // Only a run whose every pass settled is pruned, so the message may say so (and must say how many).
    assert.match(error.message, /every one of its passes has settled \(it had \d+\)/, `${what}: the message says why nothing is counted twice`);
    return error;
  }
}

/** Every candidate of one status, page by page. */
async function prunable(handle: TenantStore, status: 'concluded' | 'released', closedAtOrBeforeMs: number, scanLimit = 2): Promise<string[]> {
  const runs: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await handle.prunableRuns({ status, closedAtOrBeforeMs, after, scanLimit });
    runs.push(...page.runs.map((run) => run.run));
    if (page.next === null) return runs;
    after = page.next;
  }
}

/** R1–R9: what a prune may remove, what it keeps, and how a pruned run id is answered afterwards. */
export const pruneClosedRuns: ConformanceGroup = {
  title: 'retention removes closed runs only, and a pruned run id is refused, never counted again',
  steps: [
    {
      id: 'R1',
      title: 'prunableRuns lists only runs closed at or before the cut-off that hold no slot and no hold and have every pass settled, released ones too',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxTokensPerPeriod: 1_000_000 });
        const budget = { maxTokens: 1000, maxCallTokens: 0 };
        for (const run of [OLD_CONCLUDED, RELEASED_PASS_OPEN, RECENT_CONCLUDED, PAUSED_WITH_HOLD, RUNNING, LATE_PASS_OPEN, OLD_RELEASED]) {
          assertOk(await handle.admit(admission(run, { budget })), `admit ${run}`);
        }
        await handle.settlePass({ run: OLD_CONCLUDED, epoch: 1, spend: tokens(300), concludes: false, atMs: JAN_MS + 1 });
        assertOk(await handle.resume({ run: OLD_CONCLUDED, atMs: JAN_MS + 2, leaseMs: LEASE_MS }), 'resume');
        await handle.settlePass({ run: OLD_CONCLUDED, epoch: 2, spend: tokens(200), concludes: true, atMs: JAN_MS + 3 });
        // Released with its pass never settled: that pass can still settle late and be booked, so it stays.
        await handle.releaseRun({ run: RELEASED_PASS_OPEN, atMs: JAN_MS + 4, by: OPS_ALICE });
        // Its only pass settled, then released while paused: nothing can settle any more, so it may go.
        await handle.settlePass({ run: OLD_RELEASED, epoch: 1, spend: tokens(20), concludes: false, atMs: JAN_MS + 8 });
        await handle.releaseRun({ run: OLD_RELEASED, atMs: JAN_MS + 9, by: OPS_ALICE });
        await handle.settlePass({ run: RECENT_CONCLUDED, epoch: 1, spend: tokens(50), concludes: true, atMs: CUT_OFF_MS + 1 });
        await handle.settlePass({ run: PAUSED_WITH_HOLD, epoch: 1, spend: tokens(10), concludes: false, atMs: JAN_MS + 5 });
        // Pass 1 lapses unsettled; pass 2 concludes: its first pass can still be settled late, so it stays.
        assertOk(await handle.resume({ run: LATE_PASS_OPEN, atMs: JAN_MS + 6, leaseMs: LEASE_MS }), 'resume');
        await handle.settlePass({ run: LATE_PASS_OPEN, epoch: 2, spend: tokens(5), concludes: true, atMs: JAN_MS + 7 });

        assert.deepEqual(await prunable(handle, 'concluded', CUT_OFF_MS), [OLD_CONCLUDED], 'concluded candidates');
        assert.deepEqual(await prunable(handle, 'released', CUT_OFF_MS), [OLD_RELEASED], 'released candidates');
        const page = await handle.prunableRuns({ status: 'concluded', closedAtOrBeforeMs: CUT_OFF_MS, scanLimit: 100 });
        assert.deepEqual(page.runs, [{ run: OLD_CONCLUDED, status: 'concluded', closedAtMs: JAN_MS + 3, passes: 2, receipts: 2 }]);
        assert.equal(page.next, null, 'a page shorter than the scan limit is the last');
      },
    },
    {
      id: 'R2',
      title: 'pruneRuns removes the run, its passes and receipts, leaves every period figure, hold and slot, and audits run.prune',
      async run(context) {
        const handle = acme(context);
        const spentBefore = await handle.spent('2026-01');
        const reservedBefore = await handle.reserved('2026-01');
        const holdsBefore = await handle.reservations(100);
        const slotsBefore = await handle.runningRuns(100);
        const pruned = await handle.pruneRuns({
          runs: [OLD_CONCLUDED, RELEASED_PASS_OPEN, RECENT_CONCLUDED, PAUSED_WITH_HOLD, RUNNING, LATE_PASS_OPEN, OLD_RELEASED],
          closedAtOrBeforeMs: CUT_OFF_MS,
          atMs: PRUNE_AT_MS,
          by: OPS_ALICE,
        });
        assert.deepEqual(pruned.runs, [OLD_CONCLUDED, OLD_RELEASED], 'only the runs that meet the condition go, re-checked in the transaction');
        assert.equal(pruned.passes, 3, 'passes');
        assert.equal(pruned.receipts, 3, 'receipts: one per pass, every pass of a pruned run settled');
        assert.ok(pruned.audit !== null, 'audited');
        assert.equal(pruned.audit.action, 'run.prune');
        assert.deepEqual(pruned.audit.by, OPS_ALICE);
        assert.deepEqual(pruned.audit.detail, { closedAtOrBeforeMs: CUT_OFF_MS, runs: [OLD_CONCLUDED, OLD_RELEASED], passes: 3, receipts: 3 });

        assert.equal(await handle.getRun(OLD_CONCLUDED), null, 'registry row gone');
        assert.equal(await handle.getRun(OLD_RELEASED), null, 'registry row gone');
        assert.deepEqual(await handle.spent('2026-01'), spentBefore, 'settled figures unchanged');
        assert.deepEqual(await handle.reserved('2026-01'), reservedBefore, 'held figures unchanged');
        assert.deepEqual(await handle.reservations(100), holdsBefore, 'holds unchanged');
        assert.deepEqual(await handle.runningRuns(100), slotsBefore, 'slots unchanged');
        for (const run of [RELEASED_PASS_OPEN, RECENT_CONCLUDED, PAUSED_WITH_HOLD, RUNNING, LATE_PASS_OPEN]) {
          assert.ok((await handle.getRun(run)) !== null, `${run} kept`);
        }
        assert.deepEqual(await prunable(handle, 'concluded', CUT_OFF_MS), [], 'nothing left to prune');
        const again = await handle.pruneRuns({ runs: [OLD_CONCLUDED], closedAtOrBeforeMs: CUT_OFF_MS, atMs: PRUNE_AT_MS, by: OPS_ALICE });
        assert.deepEqual(again, { runs: [], passes: 0, receipts: 0, audit: null }, 'a second prune of the same run removes and audits nothing');
      },
    },
    {
      id: 'R3',
      title: 'a settle retried after its receipt was pruned is CONFLICT naming the prune, and the period is not counted twice',
      async run(context) {
        const handle = acme(context);
        const spentBefore = await handle.spent('2026-01');
        await assertPrunedConflict(
          () => handle.settlePass({ run: OLD_CONCLUDED, epoch: 2, spend: tokens(200), concludes: true, atMs: PRUNE_AT_MS + 1 }),
          OLD_CONCLUDED,
          'identical settlePass retry',
        );
        await assertPrunedConflict(
          () => handle.settle({ run: OLD_CONCLUDED, epoch: 1, period: '2026-01', spend: tokens(300), releaseSlot: true, concludes: false }),
          OLD_CONCLUDED,
          'identical settle retry',
        );
        await assertPrunedConflict(
          () => handle.settle({ run: OLD_CONCLUDED, epoch: 3, period: '2026-01', spend: tokens(1), releaseSlot: false, concludes: true }),
          OLD_CONCLUDED,
          'a settle of a new epoch',
        );
        assert.deepEqual(await handle.spent('2026-01'), spentBefore, 'nothing counted again');
      },
    },
    {
      id: 'R4',
      title: 'admission, resume, heartbeat and dispatch under a pruned run id are CONFLICT; an operator release answers already-closed',
      async run(context) {
        const handle = acme(context);
        const runningBefore = await handle.running();
        await assertPrunedConflict(() => handle.admit(admission(OLD_CONCLUDED, { atMs: PRUNE_AT_MS })), OLD_CONCLUDED, 'admit');
        await assertPrunedConflict(() => handle.resume({ run: OLD_CONCLUDED, atMs: PRUNE_AT_MS, leaseMs: LEASE_MS }), OLD_CONCLUDED, 'resume');
        await assertPrunedConflict(
          () => handle.heartbeat({ run: OLD_RELEASED, epoch: 1, atMs: PRUNE_AT_MS, leaseMs: LEASE_MS }),
          OLD_RELEASED,
          'heartbeat',
        );
        await assertPrunedConflict(
          () => handle.dispatch({ run: OLD_RELEASED, grant: GRANT, dispatch: dispatchKey(1), ceilings: [], exempt: false, atMs: PRUNE_AT_MS }),
          OLD_RELEASED,
          'dispatch',
        );
        const released = await handle.releaseRun({ run: OLD_CONCLUDED, atMs: PRUNE_AT_MS, by: OPS_ALICE });
        assert.equal(released.outcome, 'already-closed');
        assert.equal(released.previousStatus, 'concluded');
        assert.equal(released.audit, null, 'nothing written');
        assert.equal(await handle.running(), runningBefore, 'no slot taken');
        assert.equal(await handle.getRun(OLD_CONCLUDED), null, 'not registered again');
      },
    },
    {
      id: 'R5',
      title: 'a run id unknown to the store (never admitted) is still NOT_FOUND, not a pruned CONFLICT',
      async run(context) {
        const handle = acme(context);
        await assert.rejects(
          () => handle.settlePass({ run: runId(1199), epoch: 1, spend: tokens(1), concludes: true, atMs: PRUNE_AT_MS }),
          (error: unknown) => isQuotaError(error, 'NOT_FOUND'),
        );
        await assert.rejects(
          () => handle.resume({ run: runId(1199), atMs: PRUNE_AT_MS, leaseMs: LEASE_MS }),
          (error: unknown) => isQuotaError(error, 'NOT_FOUND'),
        );
      },
    },
    {
      id: 'R6',
      title: 'a pruned run id is pruned for its tenant only: another tenant admits the same id',
      async run(context) {
        const globex = context.store.tenant(GLOBEX);
        assertOk(await globex.admit(admission(OLD_CONCLUDED, { atMs: PRUNE_AT_MS })), 'the same id under another tenant');
      },
    },
    {
      id: 'R7',
      title: 'pruneRate removes only dispatch instants at or before the bound, in batches, and a window still counts what it held',
      async run(context) {
        const handle = context.store.tenant('initech');
        const floorMs = PRUNE_AT_MS - MAX_RATE_WINDOW_SECONDS * 1000;
        const ceiling = { count: 3, windowSeconds: 60 };
        // Four old dispatches of two grants (long before the floor) and two of a third inside the last minute.
        for (const key of [0, 1, 2]) {
          assertOk(await handle.reserveRate({ grant: 'tool://conformance/old', run: runId(1150), dispatch: dispatchKey(key), ceilings: [], atMs: JAN_MS + key, exempt: false }), 'old');
        }
        assertOk(await handle.reserveRate({ grant: 'tool://conformance/other', run: runId(1150), dispatch: dispatchKey(9), ceilings: [], atMs: JAN_MS, exempt: false }), 'old, other grant');
        for (const key of [3, 4]) {
          assertOk(await handle.reserveRate({ grant: GRANT, run: runId(1151), dispatch: dispatchKey(key), ceilings: [ceiling], atMs: PRUNE_AT_MS - 1000, exempt: false }), 'recent');
        }
        assert.equal(await handle.countPrunableRate({ atOrBeforeMs: floorMs }), 4, 'four instants at or before the floor');
        const first = await handle.pruneRate({ atOrBeforeMs: floorMs, limit: 3, atMs: PRUNE_AT_MS, by: OPS_ALICE });
        assert.equal(first.dispatches, 3, 'a batch stops at its limit');
        assert.equal(first.audit?.action, 'rate.prune');
        assert.deepEqual(first.audit?.detail, { atOrBeforeMs: floorMs, dispatches: 3 });
        const second = await handle.pruneRate({ atOrBeforeMs: floorMs, limit: 3, atMs: PRUNE_AT_MS, by: OPS_ALICE });
        assert.equal(second.dispatches, 1, 'the rest');
        const third = await handle.pruneRate({ atOrBeforeMs: floorMs, limit: 3, atMs: PRUNE_AT_MS, by: OPS_ALICE });
        assert.deepEqual(third, { dispatches: 0, audit: null }, 'nothing left, nothing audited');
        assert.equal(await handle.countPrunableRate({ atOrBeforeMs: PRUNE_AT_MS }), 2, 'the recent instants stay');
        // The window of the last minute still holds its two: one more fits, the fourth is refused.
        assertOk(await handle.reserveRate({ grant: GRANT, run: runId(1151), dispatch: dispatchKey(5), ceilings: [ceiling], atMs: PRUNE_AT_MS, exempt: false }), 'third in the minute');
        const refused = await handle.reserveRate({ grant: GRANT, run: runId(1151), dispatch: dispatchKey(6), ceilings: [ceiling], atMs: PRUNE_AT_MS, exempt: false });
        assert.equal(refused.ok, false, 'the fourth in the minute is refused');
        if (!refused.ok) assert.equal(refused.refusal.code, 'RateLimited');
      },
    },
    {
      id: 'R8',
      title: 'the prune audit rows chain like any other: the chain reads back in sequence after a prune',
      async run(context) {
        const chain = await acme(context).auditChain({ afterSeq: 0, limit: 1000 });
        assert.deepEqual(
          chain.map((row) => row.seq),
          chain.map((_, index) => index + 1),
          'no gap in the sequence',
        );
        assert.ok(chain.some((row) => row.action === 'run.prune'), 'the prune is in the chain');
      },
    },
    {
      id: 'R9',
      title: 'a released run whose pass never settled is kept by every prune, its late settle is booked, and only then may it go',
      async run(context) {
        const handle = acme(context);
        const kept = await handle.pruneRuns({ runs: [RELEASED_PASS_OPEN], closedAtOrBeforeMs: PRUNE_AT_MS, atMs: PRUNE_AT_MS, by: OPS_ALICE });
        assert.deepEqual(kept, { runs: [], passes: 0, receipts: 0, audit: null }, 'a pass that can still settle keeps its run');
        assert.deepEqual(await prunable(handle, 'released', PRUNE_AT_MS), [], 'not a candidate either');

        // The settle a prune must not turn into a refusal: booked exactly as without any prune.
        const spentBefore = await handle.spent('2026-01');
        const late = await handle.settlePass({ run: RELEASED_PASS_OPEN, epoch: 1, spend: tokens(900), concludes: true, atMs: PRUNE_AT_MS + 1 });
        assert.equal(late.outcome, 'settled', 'the late settle of the released run is accepted');
        assert.equal((await handle.spent('2026-01')).tokens, spentBefore.tokens + 900, 'and booked in its period');

        // Now every pass of it settled: it may go, and a retry of that settle is refused, not counted again.
        assert.deepEqual(await prunable(handle, 'released', PRUNE_AT_MS), [RELEASED_PASS_OPEN], 'a candidate once settled');
        const pruned = await handle.pruneRuns({ runs: [RELEASED_PASS_OPEN], closedAtOrBeforeMs: PRUNE_AT_MS, atMs: PRUNE_AT_MS + 2, by: OPS_ALICE });
        assert.deepEqual([pruned.runs, pruned.passes, pruned.receipts], [[RELEASED_PASS_OPEN], 1, 1]);
        const refusal = await assertPrunedConflict(
          () => handle.settlePass({ run: RELEASED_PASS_OPEN, epoch: 1, spend: tokens(900), concludes: true, atMs: PRUNE_AT_MS + 3 }),
          RELEASED_PASS_OPEN,
          'the late settle retried after the prune',
        );
        assert.match(refusal.message, /was released at .*it had 1\)/, 'says how it closed and how many passes settled');
        assert.equal((await handle.spent('2026-01')).tokens, spentBefore.tokens + 900, 'counted once');
      },
    },
  ],
};
