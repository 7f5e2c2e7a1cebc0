import assert from 'node:assert/strict';

import type { TenantStore } from '../../store/store.js';
import type { AdmitRequest } from '../../store/types.js';
import type { WaitOutcome, WaitTerms } from '../../store/waiters.js';
import { assertOk, assertRefused } from './assertions.js';
import { ACME, admission, auditEntry, configure, JAN_MS, LEASE_MS, OPS_ALICE, runId, tokens } from './fixtures.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Waiting admissions (docs/design/decisions.md "Waiting for a slot"; store.ts `admitOrWait`,
// `collectWaiter`, `cancelWaiter`, `sweepWaiters`, `waitQueue`, and the grant in every transaction
// that frees a slot). Case ids W1–W11, W14–W17; W20 (FIFO across processes) is each backend's own
// process race.

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };
const QUOTA = { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 1_000_000 } as const;
const WAIT_LEASE_MS = 10_000;
const TERMS: WaitTerms = { untilMs: JAN_MS + 60_000, leaseMs: WAIT_LEASE_MS };

const ask = (run: string, atMs = JAN_MS, overrides: Partial<AdmitRequest> = {}): AdmitRequest =>
  admission(run, { budget: BUDGET, atMs, ...overrides });

// The answer of a waiting verb that is not "waiting": a pass or a refusal.
function answered(outcome: WaitOutcome, what: string): Exclude<WaitOutcome, { waiting: true }> {
  assert.ok(outcome.ok || !('waiting' in outcome), `${what}: expected an answer, got ${JSON.stringify(outcome)}`);
  return outcome ;
}

function assertWaiting(outcome: WaitOutcome, position: number, what: string): void {
  assert.ok(!outcome.ok && 'waiting' in outcome, `${what}: expected waiting, got ${JSON.stringify(outcome)}`);
  assert.equal(outcome.position, position, `${what}: position`);
}

async function slots(handle: TenantStore): Promise<string[]> {
  return handle.runningRuns(100);
}

async function conclude(handle: TenantStore, run: string, atMs: number): Promise<void> {
  await handle.settlePass({ run, epoch: 1, spend: tokens(10), concludes: true, atMs });
}

/** W1–W11, W14–W17: waiters wait in line, are granted by the transaction that frees a slot, and leave nothing behind. */
export const waitingAdmissions: ConformanceGroup = {
  title: 'waiting admissions are served first come, first served, within every ceiling',
  steps: [
    {
      id: 'W1',
      title: 'an admission refused only TooManyRuns joins the queue in arrival order and holds nothing while it waits',
      async run(context) {
        const handle = acme(context);
        await configure(handle, QUOTA);
        assertOk(answered(await handle.admitOrWait(ask(runId(1)), TERMS), 'first'), 'the first admission takes the free slot at once');
        assertWaiting(await handle.admitOrWait(ask(runId(2), JAN_MS + 1), TERMS), 1, 'second');
        assertWaiting(await handle.admitOrWait(ask(runId(3), JAN_MS + 2), TERMS), 2, 'third');
        assertWaiting(await handle.admitOrWait(ask(runId(2), JAN_MS + 3), TERMS), 1, 'the second again keeps its place');
        assert.deepEqual(await slots(handle), [runId(1)], 'slots');
        assert.equal(await handle.getRun(runId(2)), null, 'a waiter is no run yet');
        assert.deepEqual((await handle.reservations(10)).map((held) => held.run), [runId(1)], 'holds');
        assert.deepEqual(await handle.waitQueue({ atMs: JAN_MS + 5 }), { depth: 2, oldestEnqueuedAtMs: JAN_MS + 1, uncollected: 0 });
      },
    },
    {
      id: 'W2',
      title: 'the settle that frees a slot grants the first waiter in its transaction; an admission that does not wait never goes first',
      async run(context) {
        const handle = acme(context);
        await conclude(handle, runId(1), JAN_MS + 10);
        assert.deepEqual(await slots(handle), [runId(2)], 'the first waiter holds the slot the settle freed');
        assert.equal((await handle.getRun(runId(2)))?.status, 'running', 'its run and pass 1 are in the books');
        assertRefused(await handle.admit(ask(runId(9), JAN_MS + 11)), 'TooManyRuns', { running: 1, limit: 1 }, 'a later arrival');
        assertWaiting(await handle.collectWaiter(ask(runId(3), JAN_MS + 12), TERMS), 1, 'the third moved up');
        const pass = assertOk(answered(await handle.collectWaiter(ask(runId(2), JAN_MS + 12), TERMS), 'the second collects'), 'the second collects');
        assert.deepEqual({ run: pass.run, epoch: pass.epoch, hold: pass.hold }, { run: runId(2), epoch: 1, hold: tokens(1000) });
        assert.equal(pass.leaseExpiresAtMs, JAN_MS + 10 + LEASE_MS, 'its lease runs from the grant');
        assert.deepEqual(await handle.waitQueue({ atMs: JAN_MS + 12 }), { depth: 1, oldestEnqueuedAtMs: JAN_MS + 2, uncollected: 0 });
      },
    },
    {
      id: 'W3',
      title: 'a raised ceiling grants waiters in the transaction that raises it, and never beyond the ceiling',
      async run(context) {
        const handle = acme(context);
        assertWaiting(await handle.admitOrWait(ask(runId(4), JAN_MS + 20), TERMS), 2, 'fourth');
        assertWaiting(await handle.admitOrWait(ask(runId(5), JAN_MS + 21), TERMS), 3, 'fifth');
        await handle.setQuota({ ...QUOTA, maxConcurrentRuns: 3 }, auditEntry('quota.set', 'quota', JAN_MS + 22));
        assert.deepEqual(await slots(handle), [runId(2), runId(3), runId(4)], 'two more granted, up to the ceiling');
        assertWaiting(await handle.collectWaiter(ask(runId(5), JAN_MS + 23), TERMS), 1, 'the fifth waits on');
        assertOk(answered(await handle.collectWaiter(ask(runId(3), JAN_MS + 23), TERMS), 'third collects'), 'third collects');
        assertOk(answered(await handle.collectWaiter(ask(runId(4), JAN_MS + 23), TERMS), 'fourth collects'), 'fourth collects');
      },
    },
    {
      id: 'W4',
      title: 'SpentOut, Halted and Unbounded never wait',
      async run(context) {
        const handle = acme(context);
        const spentOut = await handle.admitOrWait(ask(runId(10), JAN_MS + 30, { budget: { maxTokens: 2_000_000, maxCallTokens: 1 } }), TERMS);
        assertRefused(answered(spentOut, 'spentOut'), 'SpentOut', {}, 'a hold beyond the period');
        const unbounded = await handle.admitOrWait(ask(runId(11), JAN_MS + 30, { budget: {} }), TERMS);
        assertRefused(answered(unbounded, 'unbounded'), 'Unbounded', {}, 'no token bound');
        await handle.setHalt({ scope: { kind: 'agent', name: 'stopped' }, reason: 'incident 7', by: OPS_ALICE, atMs: JAN_MS + 30 });
        const halted = await handle.admitOrWait(ask(runId(12), JAN_MS + 30, { agent: { name: 'stopped', digest: 'a1'.repeat(32) } }), TERMS);
        assertRefused(answered(halted, 'halted'), 'Halted', {}, 'a halted agent');
        assert.equal((await handle.waitQueue({ atMs: JAN_MS + 30 })).depth, 1, 'only the fifth waits');
      },
    },
    {
      id: 'W5',
      title: 'a waiter whose time is up gets the TooManyRuns refusal with its place and how long it waited, and holds nothing',
      async run(context) {
        const handle = acme(context);
        const atMs = JAN_MS + 21 + 5_000;
        const refused = await handle.collectWaiter(ask(runId(5), atMs), { untilMs: atMs, leaseMs: WAIT_LEASE_MS });
        assertRefused(
          answered(refused, 'refused'),
          'TooManyRuns',
          { running: 3, limit: 3, queuePosition: 1, waitedMs: 5_000 },
          'timed out',
        );
        assert.equal(await handle.getRun(runId(5)), null, 'no run');
        assert.deepEqual(await handle.waitQueue({ atMs }), { depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 }, 'queue empty');
        assert.deepEqual(await slots(handle), [runId(2), runId(3), runId(4)], 'slots unchanged');
      },
    },
    {
      id: 'W6',
      title: "a waiter's timer that fires in the instant its grant is written takes the grant, once",
      async run(context) {
        const handle = acme(context);
        const atMs = JAN_MS + 50_000;
        assertWaiting(await handle.admitOrWait(ask(runId(6), atMs), { untilMs: atMs + 100, leaseMs: WAIT_LEASE_MS }), 1, 'sixth');
        await conclude(handle, runId(2), atMs + 100);
        const final = { untilMs: atMs + 100, leaseMs: WAIT_LEASE_MS };
        const pass = assertOk(answered(await handle.collectWaiter(ask(runId(6), atMs + 100), final), 'the final look takes the grant'), 'the final look takes the grant');
        const again = assertOk(answered(await handle.collectWaiter(ask(runId(6), atMs + 100), final), 'a repeated look'), 'a repeated look');
        assert.deepEqual(again, pass, 'the same pass, not a second grant');
        assert.deepEqual(await slots(handle), [runId(3), runId(4), runId(6)], 'one slot for it');
        assert.equal(await handle.running(), 3, 'within the ceiling');
      },
    },
    {
      id: 'W7',
      title: 'a cancelled waiter leaves nothing; a cancelled grant gives its slot and hold back to the next waiter',
      async run(context) {
        const handle = acme(context);
        const atMs = JAN_MS + 60_000;
        assertWaiting(await handle.admitOrWait(ask(runId(7), atMs), TERMS), 1, 'seventh');
        assert.equal(await handle.cancelWaiter({ run: runId(7), atMs }), 'cancelled');
        assert.equal(await handle.cancelWaiter({ run: runId(7), atMs }), 'absent', 'cancelled once');
        assertWaiting(await handle.admitOrWait(ask(runId(13), atMs + 1), { untilMs: atMs + 60_000, leaseMs: WAIT_LEASE_MS }), 1, 'w13');
        assertWaiting(await handle.admitOrWait(ask(runId(14), atMs + 2), { untilMs: atMs + 60_000, leaseMs: WAIT_LEASE_MS }), 2, 'w14');
        await conclude(handle, runId(3), atMs + 3);
        assert.deepEqual(await slots(handle), [runId(13), runId(4), runId(6)].sort(), 'w13 granted');
        assert.equal(await handle.cancelWaiter({ run: runId(13), atMs: atMs + 4 }), 'grant-withdrawn');
        assert.equal(await handle.getRun(runId(13)), null, 'the withdrawn run is erased');
        assert.ok(!(await handle.reservations(100)).some((held) => held.run === runId(13)), 'its hold is given back');
        assert.deepEqual(await slots(handle), [runId(14), runId(4), runId(6)].sort(), 'the next waiter holds the slot');
        assertOk(answered(await handle.collectWaiter(ask(runId(14), atMs + 5), TERMS), 'w14 collects'), 'w14 collects');
      },
    },
    {
      id: 'W8',
      title: "a crashed waiter's place lapses with its lease, and a grant nobody collects is recovered by the sweep",
      async run(context) {
        const handle = acme(context);
        const atMs = JAN_MS + 70_000;
        assertWaiting(await handle.admitOrWait(ask(runId(15), atMs), TERMS), 1, 'w15 (will crash after its grant)');
        assertWaiting(await handle.admitOrWait(ask(runId(16), atMs), TERMS), 2, 'w16 (crashes while waiting)');
        assertWaiting(await handle.admitOrWait(ask(runId(17), atMs + 2_000), { untilMs: atMs + 60_000, leaseMs: 60_000 }), 3, 'w17');
        await conclude(handle, runId(4), atMs + 3);
        assert.ok((await slots(handle)).includes(runId(15)), 'w15 granted, never collected');
        const lapse = atMs + WAIT_LEASE_MS;
        assert.deepEqual(await handle.sweepWaiters({ atMs: lapse - 1 }), { expired: 0, recovered: 0, granted: 0 }, 'before the leases lapse');
        assert.deepEqual(await handle.sweepWaiters({ atMs: lapse }), { expired: 1, recovered: 1, granted: 1 }, 'at the lapse');
        assert.equal(await handle.getRun(runId(15)), null, 'the uncollected run is erased');
        assert.ok(!(await handle.reservations(100)).some((held) => held.run === runId(15)), 'and its hold given back');
        assert.deepEqual(await slots(handle), [runId(14), runId(17), runId(6)].sort(), 'w17 took the recovered slot; w16 is gone');
        assert.deepEqual(await handle.waitQueue({ atMs: lapse }), { depth: 0, oldestEnqueuedAtMs: null, uncollected: 1 });
        assertOk(answered(await handle.collectWaiter(ask(runId(17), lapse), { untilMs: atMs + 60_000, leaseMs: 60_000 }), 'w17 collects'), 'w17 collects');
      },
    },
    {
      id: 'W9',
      title: 'a waiter that something else refuses when its turn comes does not hold up the queue; it hears why',
      async run(context) {
        const handle = acme(context);
        const atMs = JAN_MS + 90_000;
        const agent = { name: 'paused-agent', digest: 'a2'.repeat(32) };
        assertWaiting(await handle.admitOrWait(ask(runId(18), atMs, { agent }), TERMS), 1, 'w18');
        assertWaiting(await handle.admitOrWait(ask(runId(19), atMs + 1), TERMS), 2, 'w19');
        await handle.setHalt({ scope: { kind: 'agent', name: 'paused-agent' }, reason: 'incident 8', by: OPS_ALICE, atMs: atMs + 2 });
        await conclude(handle, runId(14), atMs + 3);
        assert.ok((await slots(handle)).includes(runId(19)), 'w19 granted past the halted w18');
        const halted = await handle.collectWaiter(ask(runId(18), atMs + 4, { agent }), TERMS);
        assertRefused(answered(halted, 'halted'), 'Halted', { scope: 'agent:paused-agent' }, 'w18 hears its halt');
        assertOk(answered(await handle.collectWaiter(ask(runId(19), atMs + 4), TERMS), 'w19 collects'), 'w19 collects');
      },
    },
    {
      id: 'W10',
      title: "an operator's release and the sweep of a lapsed run grant waiters in their own transaction",
      async run(context) {
        const handle = acme(context);
        const atMs = JAN_MS + 100_000;
        assertWaiting(await handle.admitOrWait(ask(runId(20), atMs), { untilMs: atMs + 600_000, leaseMs: 600_000 }), 1, 'w20');
        assertWaiting(await handle.admitOrWait(ask(runId(21), atMs), { untilMs: atMs + 600_000, leaseMs: 600_000 }), 2, 'w21');
        await handle.releaseRun({ run: runId(6), atMs: atMs + 1, by: OPS_ALICE });
        assert.ok((await slots(handle)).includes(runId(20)), 'the release granted w20');
        // Pass 1 of w17 lapses at its grant + LEASE_MS; the sweep frees its slot for w21.
        const lapse = JAN_MS + 70_000 + WAIT_LEASE_MS + LEASE_MS;
        assert.deepEqual(await handle.sweepRun({ run: runId(17), atMs: lapse }), { run: runId(17), releasedSlot: true, stranded: true });
        assert.ok((await slots(handle)).includes(runId(21)), 'the sweep granted w21');
        assert.equal(await handle.running(), 3, 'within the ceiling');
      },
    },
    {
      id: 'W14',
      title: "a waiter held back only by its own agent's ceiling does not block the waiters behind it",
      async run(context) {
        const handle = context.store.tenant('agents-co');
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 2, agents: { slow: { maxConcurrentRuns: 1 } } });
        const slow = { name: 'slow', digest: 'a1'.repeat(32) };
        assertOk(await handle.admit(admission(runId(500), { agent: slow })), 'slow-1 holds the agent slot');
        assertOk(await handle.admit(admission(runId(501))), 'other-1 holds the last tenant slot');
        assertWaiting(await handle.admitOrWait(admission(runId(502), { agent: slow, atMs: JAN_MS + 1 }), TERMS), 1, 'slow-2 first in line');
        assertWaiting(await handle.admitOrWait(admission(runId(503), { atMs: JAN_MS + 2 }), TERMS), 2, 'other-2 behind it');
        await handle.settlePass({ run: runId(501), epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS + 3 });
        assert.deepEqual(await handle.runningRuns(10), [runId(500), runId(503)], 'other-2 took the freed slot past slow-2');
        assertWaiting(await handle.collectWaiter(admission(runId(502), { agent: slow, atMs: JAN_MS + 4 }), TERMS), 1, 'slow-2 keeps its place');
        await handle.settlePass({ run: runId(500), epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS + 5 });
        assert.deepEqual(await handle.runningRuns(10), [runId(502), runId(503)], 'slow-2 granted when its agent has room');
      },
    },
    {
      id: 'W15',
      title: 'a waiter the grant loop refused for spend hears SpentOut, not a TooManyRuns decided after a waiter behind it took the slot',
      async run(context) {
        const handle = context.store.tenant('spend-wait');
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 30_000 });
        const hold = (maxTokens: number, maxCallTokens: number) => ({ budget: { maxTokens, maxCallTokens }, width: 1 });
        assertOk(await handle.admit(admission(runId(600), hold(20_000, 4_000))), 'the holder holds 24 000');
        assertWaiting(await handle.admitOrWait(admission(runId(601), { ...hold(5_000, 1_000), atMs: JAN_MS + 1 }), TERMS), 1, 'w601 (6 000)');
        assertWaiting(await handle.admitOrWait(admission(runId(602), { ...hold(100, 0), atMs: JAN_MS + 2 }), TERMS), 2, 'w602 (100)');
        await handle.settlePass({ run: runId(600), epoch: 1, spend: tokens(29_000), concludes: true, atMs: JAN_MS + 3 });
        assert.deepEqual(await slots(handle), [runId(602)], 'w602 fits the period and takes the slot past w601');
        const refused = answered(await handle.collectWaiter(admission(runId(601), { ...hold(5_000, 1_000), atMs: JAN_MS + 4 }), TERMS), 'w601');
        assertRefused(refused, 'SpentOut', {}, 'w601 hears what refused it: the period cannot hold its 6 000');
        assert.deepEqual(await handle.waitQueue({ atMs: JAN_MS + 4 }), { depth: 0, oldestEnqueuedAtMs: null, uncollected: 1 });
        assertOk(answered(await handle.collectWaiter(admission(runId(602), { ...hold(100, 0), atMs: JAN_MS + 4 }), TERMS), 'w602'), 'w602 collects');
      },
    },
    {
      id: 'W16',
      title: 'a waiter refused for a halt that is lifted before it collects waits on in its own place, with its enqueuedAtMs',
      async run(context) {
        const handle = context.store.tenant('halt-wait');
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 1 });
        const agent = { name: 'paused', digest: 'a1'.repeat(32) };
        assertOk(await handle.admit(admission(runId(700))), 'the holder');
        assertWaiting(await handle.admitOrWait(admission(runId(701), { agent, atMs: JAN_MS + 1 }), TERMS), 1, 'w701 (paused agent)');
        assertWaiting(await handle.admitOrWait(admission(runId(702), { atMs: JAN_MS + 2 }), TERMS), 2, 'w702');
        assertWaiting(await handle.admitOrWait(admission(runId(703), { atMs: JAN_MS + 3 }), TERMS), 3, 'w703');
        await handle.setHalt({ scope: { kind: 'agent', name: 'paused' }, reason: 'incident 9', by: OPS_ALICE, atMs: JAN_MS + 4 });
        await handle.settlePass({ run: runId(700), epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS + 5 });
        assert.deepEqual(await slots(handle), [runId(702)], 'w702 granted past the halted w701');
        assert.equal(await handle.liftHalt({ kind: 'agent', name: 'paused' }), true, 'the halt is lifted before w701 looks again');
        const back = await handle.collectWaiter(admission(runId(701), { agent, atMs: JAN_MS + 6 }), TERMS);
        assertWaiting(back, 1, 'only room refuses w701 now: it waits on, first');
        assert.ok(!back.ok && 'waiting' in back && back.enqueuedAtMs === JAN_MS + 1, 'w701 keeps the instant it joined');
        assertWaiting(await handle.collectWaiter(admission(runId(703), { atMs: JAN_MS + 6 }), TERMS), 2, 'w703 stays behind it');
        assertOk(answered(await handle.collectWaiter(admission(runId(702), { atMs: JAN_MS + 7 }), TERMS), 'w702'), 'w702 collects');
        await handle.settlePass({ run: runId(702), epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS + 8 });
        assert.deepEqual(await slots(handle), [runId(701)], 'the next freed slot goes to w701, not w703');
      },
    },
    {
      id: 'W17',
      title: 'a final collect with keepPlace (another caller of the run waits on) answers its refusal and leaves the place waiting',
      async run(context) {
        const handle = context.store.tenant('retry-wait');
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 1 });
        const shortWait: WaitTerms = { untilMs: JAN_MS + 600, leaseMs: WAIT_LEASE_MS };
        const longWait: WaitTerms = { untilMs: JAN_MS + 10_000, leaseMs: WAIT_LEASE_MS };
        assertOk(await handle.admit(admission(runId(800))), 'the holder');
        assertWaiting(await handle.admitOrWait(admission(runId(801), { atMs: JAN_MS + 1 }), shortWait), 1, 'caller A of run 801');
        assertWaiting(await handle.admitOrWait(admission(runId(802), { atMs: JAN_MS + 2 }), longWait), 2, 'run 802, behind it');
        assertWaiting(await handle.admitOrWait(admission(runId(801), { atMs: JAN_MS + 3 }), longWait), 1, 'caller B of run 801 (a retry) joins its place');
        // Caller A's wait is over while B waits on: it keeps the place for B (keepPlace).
        const timedOut = answered(await handle.collectWaiter(admission(runId(801), { atMs: JAN_MS + 600 }), { ...shortWait, keepPlace: true }), 'caller A at the end of its wait');
        assertRefused(timedOut, 'TooManyRuns', { queuePosition: 1, waitedMs: 599 }, 'caller A hears TooManyRuns with its place');
        const still = await handle.collectWaiter(admission(runId(801), { atMs: JAN_MS + 601 }), longWait);
        assertWaiting(still, 1, 'caller B still waits first');
        assert.ok(!still.ok && 'waiting' in still && still.enqueuedAtMs === JAN_MS + 1, 'in the place run 801 joined at');
        await handle.settlePass({ run: runId(800), epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS + 700 });
        assert.deepEqual(await slots(handle), [runId(801)], 'the freed slot goes to run 801, not to 802 behind it');
        assertOk(answered(await handle.collectWaiter(admission(runId(801), { atMs: JAN_MS + 701 }), longWait), 'caller B collects'), 'caller B collects');
        // The place lives until the last caller's end: at that end it goes, as for one caller.
        assertWaiting(await handle.collectWaiter(admission(runId(802), { atMs: JAN_MS + 702 }), longWait), 1, 'run 802 is first now');
        const last = answered(await handle.collectWaiter(admission(runId(802), { atMs: JAN_MS + 10_000 }), longWait), 'run 802 at its end');
        assertRefused(last, 'TooManyRuns', { queuePosition: 1 }, 'run 802 times out');
        assert.deepEqual(await handle.waitQueue({ atMs: JAN_MS + 10_000 }), { depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
      },
    },
    {
      id: 'W11',
      title: 'settles racing over two handles grant each waiter once, in order, never beyond the ceiling',
      async run(context) {
        const first = context.store.tenant('waitrace');
        const second = context.store.tenant('waitrace');
        await configure(first, { period: 'monthly', maxConcurrentRuns: 4 });
        const holders = [0, 1, 2, 3].map((i) => runId(300 + i));
        for (const run of holders) assertOk(await first.admit(admission(run)), `holder ${run}`);
        const waiters = Array.from({ length: 10 }, (_, i) => runId(400 + i));
        for (const [i, run] of waiters.entries()) {
          assertWaiting(await (i % 2 === 0 ? first : second).admitOrWait(admission(run, { atMs: JAN_MS + i }), TERMS), i + 1, run);
        }
        await Promise.all(
          holders.map((run, i) =>
            (i % 2 === 0 ? first : second).settlePass({ run, epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS + 20 }),
          ),
        );
        assert.deepEqual(await first.runningRuns(100), waiters.slice(0, 4), 'the first four waiters, each once');
        assert.deepEqual(await first.waitQueue({ atMs: JAN_MS + 20 }), { depth: 6, oldestEnqueuedAtMs: JAN_MS + 4, uncollected: 4 });
      },
    },
  ],
};
