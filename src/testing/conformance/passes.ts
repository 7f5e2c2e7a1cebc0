import assert from 'node:assert/strict';

import { assertOk, assertRejectsWith } from './assertions.js';
import { ACME, admission, configure, FEB_MS, JAN_MS, LEASE_MS, OPS_ALICE, runId, tokens } from './fixtures.js';
import { snapshotTenant } from './no-writes.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Passes after admission: resume (docs/design/rules.md#l15–#l18) and settlePass (#l19–#l23).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const A = runId(200);
const B = runId(201);
const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };

/** L15–L18: a resume is a new pass with a new epoch: no slot, never gated, hold carried. */
export const resumePasses: ConformanceGroup = {
  title: 'resume opens a new pass that is never gated',
  steps: [
    {
      id: 'L15',
      title: 'resume opens the next epoch, takes no slot and keeps the hold',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 10_000 });
        assertOk(await handle.admit(admission(A, { budget: BUDGET, width: 2 })), 'admit A holding 1200');
        const settled = await handle.settlePass({ run: A, epoch: 1, spend: tokens(200), concludes: false, atMs: JAN_MS + 1000 });
        assert.equal(settled.receipt.releaseSlot, true, 'the admission pass releases the slot');
        assert.equal((await handle.getRun(A))?.status, 'paused', 'status after a pass ended without concluding');
        assert.deepEqual(await handle.runningRuns(100), [], 'runningRuns after the pass');
        assertOk(await handle.admit(admission(B, { budget: { maxTokens: 100, maxCallTokens: 0 } })), 'admit B into the slot');
        const resumedAtMs = JAN_MS + 60_000;
        const pass = assertOk(await handle.resume({ run: A, atMs: resumedAtMs, leaseMs: LEASE_MS }), 'resume A');
        assert.deepEqual(
          pass,
          { ok: true, run: A, epoch: 2, period: '2026-01', hold: tokens(1000), leaseExpiresAtMs: resumedAtMs + LEASE_MS },
          'the resumed pass',
        );
        assert.deepEqual(await handle.runningRuns(100), [B], 'runningRuns: the resume took no slot');
        const record = await handle.getRun(A);
        assert.equal(record?.status, 'running', 'status after resume');
        assert.equal(record?.lastEpoch, 2, 'lastEpoch after resume');
      },
    },
    {
      id: 'L16',
      title: 'resume is never refused: not at a ceiling of 0, nor on a spent period, nor under a tenant halt',
      async run(context) {
        const handle = acme(context);
        await handle.settlePass({ run: A, epoch: 2, spend: tokens(0), concludes: false, atMs: JAN_MS + 70_000 });
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 0, maxTokensPerPeriod: 0 });
        await handle.setHalt({ scope: { kind: 'tenant' }, reason: 'incident 42', by: OPS_ALICE, atMs: JAN_MS + 80_000 });
        const pass = assertOk(await handle.resume({ run: A, atMs: JAN_MS + 90_000, leaseMs: LEASE_MS }), 'resume A');
        assert.equal(pass.epoch, 3, 'epoch');
        assert.deepEqual(pass.hold, tokens(1000), 'hold');
        assert.deepEqual(await handle.runningRuns(100), [B], 'runningRuns');
        assert.equal(await handle.liftHalt({ kind: 'tenant' }), true, 'lift the halt');
      },
    },
    {
      id: 'L17',
      title: 'resume carries the hold whole to the period it resumes in',
      async run(context) {
        const handle = acme(context);
        await handle.settlePass({ run: A, epoch: 3, spend: tokens(0), concludes: false, atMs: JAN_MS + 100_000 });
        await configure(handle, { period: 'monthly', maxTokensPerPeriod: 10_000 });
        const pass = assertOk(await handle.resume({ run: A, atMs: FEB_MS, leaseMs: LEASE_MS }), 'resume A');
        assert.equal(pass.epoch, 4, 'epoch');
        assert.equal(pass.period, '2026-02', 'period');
        assert.deepEqual(pass.hold, tokens(1000), 'hold');
        assert.deepEqual(
          await handle.reservations(100),
          [
            { run: A, period: '2026-02', remaining: tokens(1000) },
            { run: B, period: '2026-01', remaining: tokens(100) },
          ],
          'reservations',
        );
        assert.deepEqual(await handle.reserved('2026-01'), tokens(100), 'reserved(2026-01)');
        assert.deepEqual(await handle.reserved('2026-02'), tokens(1000), 'reserved(2026-02)');
      },
    },
    {
      id: 'L18',
      title: 'resume of an unknown run is NOT_FOUND and of a concluded run a CONFLICT',
      async run(context) {
        const handle = acme(context);
        await handle.settlePass({ run: A, epoch: 4, spend: tokens(50), concludes: true, atMs: FEB_MS + 1000 });
        const before = await snapshotTenant(handle, { runs: [A], periods: ['2026-01', '2026-02'] });
        await assertRejectsWith(
          () => handle.resume({ run: A, atMs: FEB_MS + 2000, leaseMs: LEASE_MS }),
          'CONFLICT',
          'resume of a concluded run',
        );
        await assertRejectsWith(
          () => handle.resume({ run: runId(299), atMs: FEB_MS + 2000, leaseMs: LEASE_MS }),
          'NOT_FOUND',
          'resume of an unknown run',
        );
        assert.deepEqual(
          await snapshotTenant(handle, { runs: [A], periods: ['2026-01', '2026-02'] }),
          before,
          'a refused resume wrote something',
        );
      },
    },
  ],
};

const S1 = runId(210);
const S2 = runId(211);

/** L19–L23: settlePass derives the receipt from the pass: its period, whether it releases the slot. */
export const settlePasses: ConformanceGroup = {
  title: 'settlePass settles each pass once, into the period it started in',
  steps: [
    {
      id: 'L19',
      title: "the admission pass's settlement releases the slot; a resumed pass's does not",
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 5, maxTokensPerPeriod: 100_000 });
        assertOk(await handle.admit(admission(S1, { budget: BUDGET })), 'admit S1');
        assertOk(await handle.admit(admission(S2, { budget: BUDGET })), 'admit S2');
        const first = await handle.settlePass({ run: S1, epoch: 1, spend: tokens(10), concludes: false, atMs: JAN_MS + 1000 });
        assert.deepEqual(
          first,
          {
            outcome: 'settled',
            receipt: { run: S1, epoch: 1, period: '2026-01', spend: tokens(10), releaseSlot: true, concludes: false },
            overrun: tokens(0),
          },
          'settlement of pass 1',
        );
        assert.deepEqual(await handle.runningRuns(100), [S2], 'runningRuns after pass 1');
        await handle.resume({ run: S1, atMs: JAN_MS + 2000, leaseMs: LEASE_MS });
        const second = await handle.settlePass({ run: S1, epoch: 2, spend: tokens(5), concludes: false, atMs: JAN_MS + 3000 });
        assert.equal(second.receipt.releaseSlot, false, 'releaseSlot of pass 2');
        assert.deepEqual(await handle.runningRuns(100), [S2], 'runningRuns after pass 2');
        assert.deepEqual(await handle.spent('2026-01'), tokens(15), 'spent');
        assert.deepEqual(await handle.reservations(100), [
          { run: S1, period: '2026-01', remaining: tokens(985) },
          { run: S2, period: '2026-01', remaining: tokens(1000) },
        ]);
      },
    },
    {
      id: 'L20',
      title: 'hold 600, a suspending pass settles 200 and the concluding pass 100: settled 300, reserved 0',
      async run(context) {
        const handle = context.store.tenant('c6-example');
        const run = runId(220);
        await configure(handle, { period: 'monthly', maxTokensPerPeriod: 10_000 });
        const admitted = assertOk(
          await handle.admit(admission(run, { budget: { maxTokens: 500, maxCallTokens: 50 }, width: 2 })),
          'admit',
        );
        assert.deepEqual(admitted.hold, tokens(600), 'hold');
        await handle.settlePass({ run, epoch: 1, spend: tokens(200), concludes: false, atMs: JAN_MS + 1000 });
        assert.deepEqual(await handle.spent('2026-01'), tokens(200), 'spent after the suspending pass');
        assert.deepEqual(await handle.reserved('2026-01'), tokens(400), 'reserved after the suspending pass');
        const resumed = assertOk(await handle.resume({ run, atMs: JAN_MS + 2000, leaseMs: LEASE_MS }), 'resume');
        assert.deepEqual(resumed.hold, tokens(400), 'hold of the resumed pass');
        const last = await handle.settlePass({ run, epoch: 2, spend: tokens(100), concludes: true, atMs: JAN_MS + 3000 });
        assert.deepEqual(last.receipt, {
          run,
          epoch: 2,
          period: '2026-01',
          spend: tokens(100),
          releaseSlot: false,
          concludes: true,
        });
        assert.deepEqual(await handle.spent('2026-01'), tokens(300), 'spent at the end');
        assert.deepEqual(await handle.reserved('2026-01'), tokens(0), 'reserved at the end');
        assert.deepEqual(await handle.reservations(100), [], 'reservations at the end');
        assert.equal((await handle.getRun(run))?.status, 'concluded', 'status');
      },
    },
    {
      id: 'L21',
      title: 'each pass accrues to the period it started in, even when it ends in the next',
      async run(context) {
        const handle = context.store.tenant('month-end');
        const run = runId(230);
        await configure(handle, { period: 'monthly', maxTokensPerPeriod: 10_000 });
        const lastMinuteOfJanuary = Date.UTC(2026, 0, 31, 23, 59);
        assertOk(
          await handle.admit(admission(run, { budget: { maxTokens: 500, maxCallTokens: 0 }, atMs: lastMinuteOfJanuary })),
          'admit at the end of January',
        );
        const first = await handle.settlePass({
          run,
          epoch: 1,
          spend: tokens(100),
          concludes: false,
          atMs: Date.UTC(2026, 1, 1, 0, 1),
        });
        assert.equal(first.receipt.period, '2026-01', 'period of the pass that crossed midnight');
        assert.deepEqual(await handle.spent('2026-01'), tokens(100), 'spent(2026-01)');
        assert.deepEqual(await handle.spent('2026-02'), tokens(0), 'spent(2026-02)');
        const resumed = assertOk(await handle.resume({ run, atMs: Date.UTC(2026, 1, 1, 0, 2), leaseMs: LEASE_MS }), 'resume');
        assert.equal(resumed.period, '2026-02', 'period of the resumed pass');
        const second = await handle.settlePass({
          run,
          epoch: 2,
          spend: tokens(50),
          concludes: true,
          atMs: Date.UTC(2026, 1, 1, 0, 3),
        });
        assert.equal(second.receipt.period, '2026-02', 'period of the second pass');
        assert.deepEqual(await handle.spent('2026-01'), tokens(100), 'spent(2026-01) at the end');
        assert.deepEqual(await handle.spent('2026-02'), tokens(50), 'spent(2026-02) at the end');
      },
    },
    {
      id: 'L22',
      title: 'an identical retry answers already-settled, a different one is a CONFLICT, and neither changes anything',
      async run(context) {
        const handle = context.store.tenant('month-end');
        const run = runId(230);
        const probe = { runs: [run], periods: ['2026-01', '2026-02'] };
        const before = await snapshotTenant(handle, probe);
        const retry = await handle.settlePass({
          run,
          epoch: 2,
          spend: tokens(50),
          concludes: true,
          atMs: Date.UTC(2026, 1, 1, 0, 30),
        });
        assert.deepEqual(
          retry,
          {
            outcome: 'already-settled',
            receipt: { run, epoch: 2, period: '2026-02', spend: tokens(50), releaseSlot: false, concludes: true },
            overrun: retry.overrun,
          },
          'the identical retry, arriving later',
        );
        await assertRejectsWith(
          () => handle.settlePass({ run, epoch: 2, spend: tokens(51), concludes: true, atMs: Date.UTC(2026, 1, 1, 0, 31) }),
          'CONFLICT',
          'a retry with other spend',
        );
        await assertRejectsWith(
          () => handle.settlePass({ run, epoch: 1, spend: tokens(100), concludes: true, atMs: Date.UTC(2026, 1, 1, 0, 31) }),
          'CONFLICT',
          'a retry that now concludes',
        );
        assert.deepEqual(await snapshotTenant(handle, probe), before, 'a retry wrote something');
      },
    },
    {
      id: 'L22.1',
      title: "a pass has one receipt whichever settle wrote it: the port's settle and settlePass each answer the other's receipt",
      async run(context) {
        const handle = context.store.tenant('one-receipt');
        const first = runId(240);
        const second = runId(241);
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 5, maxTokensPerPeriod: 10_000 });
        assertOk(await handle.admit(admission(first, { budget: BUDGET })), 'admit the first run');
        assertOk(await handle.admit(admission(second, { budget: BUDGET })), 'admit the second run');
        const receipt = { epoch: 1, period: '2026-01', releaseSlot: true, concludes: false } as const;

        // settlePass wrote the receipt: the port's settle of the same pass is a retry of it.
        assert.equal((await handle.settlePass({ run: first, epoch: 1, spend: tokens(10), concludes: false, atMs: JAN_MS + 1000 })).outcome, 'settled');
        const probe = { runs: [first, second], periods: ['2026-01'] };
        const afterPass = await snapshotTenant(handle, probe);
        assert.equal(await handle.settle({ ...receipt, run: first, spend: tokens(10) }), 'already-settled', "the port's identical settle");
        await assertRejectsWith(() => handle.settle({ ...receipt, run: first, spend: tokens(11) }), 'CONFLICT', "the port's settle with other spend");
        await assertRejectsWith(() => handle.settle({ ...receipt, run: first, spend: tokens(10), concludes: true }), 'CONFLICT', "the port's settle that concludes");
        assert.deepEqual(await snapshotTenant(handle, probe), afterPass, "the port's retries wrote something");

        // The port's settle wrote the receipt: settlePass of that pass is a retry of it.
        assert.equal(await handle.settle({ ...receipt, run: second, spend: tokens(20), concludes: true }), 'settled', "the port's settle");
        const afterPort = await snapshotTenant(handle, probe);
        const retry = await handle.settlePass({ run: second, epoch: 1, spend: tokens(20), concludes: true, atMs: JAN_MS + 2000 });
        assert.equal(retry.outcome, 'already-settled', 'settlePass after the port settled the pass identically');
        await assertRejectsWith(
          () => handle.settlePass({ run: second, epoch: 1, spend: tokens(21), concludes: true, atMs: JAN_MS + 2000 }),
          'CONFLICT',
          'settlePass with other spend',
        );
        assert.deepEqual(await snapshotTenant(handle, probe), afterPort, 'the retries of settlePass wrote something');
        assert.deepEqual(await handle.spent('2026-01'), tokens(30), 'each pass was counted once');
      },
    },
    {
      id: 'L23',
      title: 'settling a pass that was never opened is NOT_FOUND and writes nothing',
      async run(context) {
        const handle = acme(context);
        const probe = { runs: [S1, runId(299)], periods: ['2026-01'] };
        const before = await snapshotTenant(handle, probe);
        await assertRejectsWith(
          () => handle.settlePass({ run: runId(299), epoch: 1, spend: tokens(1), concludes: true, atMs: JAN_MS }),
          'NOT_FOUND',
          'an unknown run',
        );
        await assertRejectsWith(
          () => handle.settlePass({ run: S1, epoch: 3, spend: tokens(1), concludes: true, atMs: JAN_MS }),
          'NOT_FOUND',
          'an epoch the run never opened',
        );
        assert.deepEqual(await snapshotTenant(handle, probe), before, 'a NOT_FOUND wrote something');
      },
    },
  ],
};
