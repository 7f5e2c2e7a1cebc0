import assert from 'node:assert/strict';

import { periodKey } from '../../core/period.js';
import { checkSpend } from '../../core/spend-check.js';
import type { QuotaSettlement } from '../../store/types.js';
import { assertOk, assertRejectsWith } from './assertions.js';
import { ACME, admission, runId, T_MS, tokenQuota, tokens } from './fixtures.js';
import { assertRefusedWithoutWrites, snapshotTenant } from './no-writes.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Spend: holds and settlements through the port's reserve, carry, reservations, reserved, settle
// and spent (docs/design/rules.md#c5–#c19).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const RECEIPT_PERIOD = '2999-01';
const R = runId(5);
const receipt = (epoch: number, spendTokens: number): QuotaSettlement => ({
  run: R,
  epoch,
  period: RECEIPT_PERIOD,
  spend: tokens(spendTokens),
  releaseSlot: false,
  concludes: false,
});

/** C5–C8: a receipt is written once per pass; an identical retry is a no-op, a different one a CONFLICT. */
export const receiptsSettleOnce: ConformanceGroup = {
  title: 'receipts settle a pass exactly once',
  steps: [
    {
      id: 'C5',
      title: 'two passes settled into one period add up',
      async run(context) {
        const handle = acme(context);
        assert.equal(await handle.settle(receipt(1, 400)), 'settled', 'settle epoch 1');
        assert.equal(await handle.settle(receipt(2, 600)), 'settled', 'settle epoch 2');
        assert.deepEqual(await handle.spent(RECEIPT_PERIOD), tokens(1000), `spent(${RECEIPT_PERIOD})`);
      },
    },
    {
      id: 'C6',
      title: 'an identical retry of a receipt answers already-settled and charges nothing',
      async run(context) {
        const handle = acme(context);
        assert.equal(await handle.settle(receipt(1, 400)), 'already-settled', 'retry of epoch 1');
        assert.deepEqual(await handle.spent(RECEIPT_PERIOD), tokens(1000), `spent(${RECEIPT_PERIOD})`);
      },
    },
    {
      id: 'C7',
      title: 'a retry of a receipt with a different payload is a CONFLICT and changes nothing',
      async run(context) {
        const handle = acme(context);
        const before = await snapshotTenant(handle, { periods: [RECEIPT_PERIOD] });
        await assertRejectsWith(() => handle.settle(receipt(1, 401)), 'CONFLICT', 'settle epoch 1 with 401 tokens');
        await assertRejectsWith(
          () => handle.settle({ ...receipt(1, 400), period: '2999-03' }),
          'CONFLICT',
          'settle epoch 1 into another period',
        );
        await assertRejectsWith(
          () => handle.settle({ ...receipt(1, 400), period: null }),
          'CONFLICT',
          'settle epoch 1 with no period',
        );
        await assertRejectsWith(
          () => handle.settle({ ...receipt(1, 400), spend: { tokens: 400, minorUnits: 1 } }),
          'CONFLICT',
          'settle epoch 1 with minor units',
        );
        await assertRejectsWith(
          () => handle.settle({ ...receipt(1, 400), releaseSlot: true }),
          'CONFLICT',
          'settle epoch 1 releasing the slot',
        );
        assert.deepEqual(await snapshotTenant(handle, { periods: [RECEIPT_PERIOD] }), before, 'the CONFLICT wrote something');
      },
    },
    {
      id: 'C8',
      title: 'a period nothing settled into reads zero',
      async run(context) {
        assert.deepEqual(await acme(context).spent('2999-02'), tokens(0), 'spent(2999-02)');
      },
    },
  ],
};

const P1 = '2998-01';
const P2 = '2998-02';
const HA = runId(1);
const HB = runId(2);
const HC = runId(3);
const HD = runId(4);
const QUOTA_1000 = tokenQuota(1000);

/** C9–C19: holds fill a period exactly; settling moves spend from hold to total; carry and release move holds. */
export const holdsFillAPeriod: ConformanceGroup = {
  title: 'holds fill a period exactly and move as runs settle',
  steps: [
    {
      id: 'C9',
      title: 'two holds that fill the period exactly are both admitted',
      async run(context) {
        const handle = acme(context);
        assertOk(
          await handle.reserve({ run: HA, quota: QUOTA_1000, hold: { period: P1, amount: tokens(600) }, atMs: T_MS }),
          'reserve A holding 600',
        );
        assertOk(
          await handle.reserve({ run: HC, quota: QUOTA_1000, hold: { period: P1, amount: tokens(400) }, atMs: T_MS }),
          'reserve C holding 400',
        );
        assert.equal(await handle.running(), 2, 'running()');
      },
    },
    {
      id: 'C10',
      title: 'a retried reserve of a run that holds spend is admitted on a full period and holds nothing more',
      async run(context) {
        const handle = acme(context);
        assertOk(
          await handle.reserve({ run: HA, quota: QUOTA_1000, hold: { period: P1, amount: tokens(600) }, atMs: T_MS }),
          'retry of A',
        );
        assert.deepEqual(await handle.reserved(P1), tokens(1000), `reserved(${P1})`);
      },
    },
    {
      id: 'C11',
      title: 'a hold that does not fit refuses with SpentOut and takes no slot',
      async run(context) {
        const handle = acme(context);
        await assertRefusedWithoutWrites(
          handle,
          { periods: [P1] },
          () => handle.reserve({ run: HB, quota: QUOTA_1000, hold: { period: P1, amount: tokens(1) }, atMs: T_MS }),
          'SpentOut',
          { tenant: ACME, period: P1, unit: 'tokens', settled: 0, reserved: 1000, requested: 1, limit: 1000 },
          'reserve B holding 1 on a full period',
        );
      },
    },
    {
      id: 'C12',
      title: 'the run refused for spend is not among the slot holders',
      async run(context) {
        const holders = await acme(context).runningRuns(100);
        assert.ok(!holders.includes(HB), `runningRuns(100) = ${JSON.stringify(holders)} contains B`);
        assert.deepEqual(holders, [HA, HC], 'runningRuns(100)');
      },
    },
    {
      id: 'C13',
      title: 'a non-concluding settlement moves its spend from the hold to the settled total',
      async run(context) {
        const handle = acme(context);
        const settled = await handle.settle({
          run: HA,
          epoch: 1,
          period: P1,
          spend: tokens(200),
          releaseSlot: true,
          concludes: false,
        });
        assert.equal(settled, 'settled', 'settle A epoch 1');
        assert.deepEqual(await handle.spent(P1), tokens(200), `spent(${P1})`);
        assert.deepEqual(await handle.reserved(P1), tokens(800), `reserved(${P1})`);
        assert.deepEqual(await handle.runningRuns(100), [HC], 'A gave its slot back');
      },
    },
    {
      id: 'C14',
      title: "the concluding settlement deletes the hold's unspent remainder",
      async run(context) {
        const handle = acme(context);
        const settled = await handle.settle({
          run: HA,
          epoch: 2,
          period: P1,
          spend: tokens(100),
          releaseSlot: false,
          concludes: true,
        });
        assert.equal(settled, 'settled', 'settle A epoch 2');
        assert.deepEqual(await handle.spent(P1), tokens(300), `spent(${P1})`);
        assert.deepEqual(await handle.reserved(P1), tokens(400), `reserved(${P1})`);
      },
    },
    {
      id: 'C15',
      title: 'a retry of the concluding receipt that no longer concludes is a CONFLICT and changes nothing',
      async run(context) {
        const handle = acme(context);
        const before = await snapshotTenant(handle, { periods: [P1] });
        await assertRejectsWith(
          () =>
            handle.settle({ run: HA, epoch: 2, period: P1, spend: tokens(100), releaseSlot: false, concludes: false }),
          'CONFLICT',
          're-settle A epoch 2 with concludes false',
        );
        assert.deepEqual(await snapshotTenant(handle, { periods: [P1] }), before, 'the CONFLICT wrote something');
      },
    },
    {
      id: 'C16',
      title: 'the room a concluded run released is admissible to the unit',
      async run(context) {
        const handle = acme(context);
        assertOk(
          await handle.reserve({ run: HD, quota: QUOTA_1000, hold: { period: P1, amount: tokens(300) }, atMs: T_MS }),
          'reserve D holding 300 (300 settled + 400 held + 300 = 1000)',
        );
        assert.deepEqual(await handle.reserved(P1), tokens(700), `reserved(${P1})`);
      },
    },
    {
      id: 'C17',
      title: 'carry moves a hold whole to another period',
      async run(context) {
        const handle = acme(context);
        await handle.carry(HC, P2);
        assert.deepEqual(await handle.reserved(P1), tokens(300), `reserved(${P1})`);
        assert.deepEqual(await handle.reserved(P2), tokens(400), `reserved(${P2})`);
        assert.deepEqual(await handle.spent(P2), tokens(0), `spent(${P2}): a carry settles nothing`);
      },
    },
    {
      id: 'C18',
      title: 'reservations lists exactly the open holds, by run id',
      async run(context) {
        assert.deepEqual(
          await acme(context).reservations(100),
          [
            { run: HC, period: P2, remaining: tokens(400) },
            { run: HD, period: P1, remaining: tokens(300) },
          ],
          'reservations(100)',
        );
      },
    },
    {
      id: 'C19',
      title: 'releasing the holders leaves both periods with nothing reserved',
      async run(context) {
        const handle = acme(context);
        await handle.release(HC);
        await handle.release(HD);
        assert.deepEqual(await handle.reserved(P1), tokens(0), `reserved(${P1})`);
        assert.deepEqual(await handle.reserved(P2), tokens(0), `reserved(${P2})`);
        assert.deepEqual(await handle.reservations(100), [], 'reservations(100)');
        assert.deepEqual(await handle.spent(P1), tokens(300), `spent(${P1}): release does not touch settled totals`);
      },
    },
  ],
};

/**
 * G4–G5 (docs/design/rules.md#g4, #g5): settled totals belong to a billing period, and period keys
 * order like time.
 */
export const periodGuards: ConformanceGroup = {
  title: "guard: a period's settled total resets with the period",
  steps: [
    {
      id: 'G4',
      title: 'a period settled to its ceiling refuses any further hold, and the next period starts at zero',
      async run(context) {
        const handle = acme(context);
        const quota = tokenQuota(1000);
        const full = '2026-08';
        const next = '2026-09';
        const run = runId(60);
        assert.equal(
          await handle.settle({ run, epoch: 1, period: full, spend: tokens(400), releaseSlot: false, concludes: false }),
          'settled',
        );
        assert.equal(
          await handle.settle({ run, epoch: 2, period: full, spend: tokens(600), releaseSlot: false, concludes: true }),
          'settled',
        );
        assert.deepEqual(await handle.spent(full), tokens(1000), `spent(${full})`);
        const figures = async (period: string) => ({
          tenant: ACME,
          period,
          quota,
          settled: await handle.spent(period),
          reserved: await handle.reserved(period),
          requested: tokens(1),
        });
        assert.notEqual(checkSpend(await figures(full)), null, `checkSpend on ${full} with a request of 1`);
        await assertRefusedWithoutWrites(
          handle,
          { periods: [full] },
          () => handle.reserve({ run: runId(61), quota, hold: { period: full, amount: tokens(1) }, atMs: T_MS }),
          'SpentOut',
          { period: full, settled: 1000, reserved: 0, requested: 1, limit: 1000 },
          `reserve 1 token in ${full}`,
        );
        assert.deepEqual(await handle.spent(next), tokens(0), `spent(${next})`);
        assert.equal(checkSpend(await figures(next)), null, `checkSpend on ${next}`);
        assertOk(
          await handle.reserve({ run: runId(61), quota, hold: { period: next, amount: tokens(1000) }, atMs: T_MS }),
          `reserve the whole ceiling in ${next}`,
        );
      },
    },
    {
      id: 'G5',
      title: 'period keys are fixed width and order like the instants they come from',
      async run() {
        const early = periodKey('monthly', 1_767_600_000_000);
        const late = periodKey('monthly', 1_794_000_000_000);
        assert.equal(early, '2026-01');
        assert.equal(late, '2026-11');
        assert.ok(early < late, `${early} < ${late}`);
        assert.equal(early.length, 7);
        assert.equal(late.length, 7);
        assert.equal(periodKey('daily', 1_767_600_000_000).length, 10);
      },
    },
  ],
};

const MAX = Number.MAX_SAFE_INTEGER;

/**
 * P7: no figure of the books saturates or wraps (docs/design/rules.md#p7, #p7-2): a settle,
 * a hold, a carry or a hold formula whose result would pass Number.MAX_SAFE_INTEGER is refused with
 * INVALID_ARGUMENT naming the field and the bound, and nothing is written.
 */
export const amountsSaturate: ConformanceGroup = {
  title: 'sums never pass the largest safe integer',
  steps: [
    {
      id: 'P7',
      title: 'a settle, hold, carry or hold formula beyond Number.MAX_SAFE_INTEGER is INVALID_ARGUMENT and writes nothing',
      async run(context) {
        const handle = acme(context);
        const [p1, p2, p3] = ['2994-01', '2994-02', '2994-03'];
        const run = runId(600);
        const settleMax = (epoch: number, amount: number) =>
          handle.settle({ run, epoch, period: p1, spend: { tokens: amount, minorUnits: amount }, releaseSlot: false, concludes: false });
        assert.equal(await settleMax(1, MAX), 'settled', 'settle the maximum');
        assert.deepEqual(await handle.spent(p1), { tokens: MAX, minorUnits: MAX }, 'spent after settling the maximum');
        const before = await snapshotTenant(handle, { periods: [p1, p2, p3] });
        await assertRejectsWithMessage(() => settleMax(2, 1), /spend\.tokens: .*9007199254740992.*9007199254740991/, 'one more token');
        await assertRejectsWithMessage(() => settleMax(2, MAX), /spend\.tokens/, 'a second maximum');
        await assertRejectsWithMessage(
          () => handle.settle({ run, epoch: 2, period: p1, spend: { tokens: 0, minorUnits: 1 }, releaseSlot: false, concludes: false }),
          /spend\.minorUnits/,
          'one more minor unit',
        );
        assert.deepEqual(await snapshotTenant(handle, { periods: [p1, p2, p3] }), before, 'refused settles wrote nothing');
        // The refused receipt was not kept: the pass can still settle an amount that fits.
        assert.equal(await settleMax(2, 0), 'settled', 'epoch 2 settles 0 afterwards');
        // A day's settle counts in its day and its month: refused, it moves neither.
        const [month, day] = ['2994-04', '2994-04-05'];
        const settleDay = (epoch: number, amount: number) =>
          handle.settle({ run, epoch, period: day, spend: { tokens: amount, minorUnits: 0 }, releaseSlot: false, concludes: false });
        assert.equal(await settleDay(3, MAX), 'settled', "settle the maximum in a day");
        const fullDay = await snapshotTenant(handle, { periods: [month, day] });
        await assertRejectsWithMessage(() => settleDay(4, 1), /spend\.tokens: .*period 2994-04\b/, "one more token in the day's month");
        assert.deepEqual(await snapshotTenant(handle, { periods: [month, day] }), fullDay, "the refused day's settle wrote nothing");

        const quota = tokenQuota(MAX);
        assertOk(
          await handle.reserve({ run: runId(601), quota, hold: { period: p2, amount: tokens(MAX) }, atMs: T_MS }),
          'a hold of the maximum fills the maximum ceiling exactly',
        );
        assertOk(
          await handle.reserve({ run: runId(602), quota, hold: { period: p3, amount: tokens(MAX) }, atMs: T_MS }),
          'a second hold of the maximum in another period',
        );
        const held = await snapshotTenant(handle, { periods: [p2, p3] });
        await assertRejectsWithMessage(() => handle.carry(runId(602), p2), /hold\.tokens: .*holds of period 2994-02/, 'carry onto a full period');
        await assertRejectsWithMessage(
          () => handle.reserve({ run: runId(603), quota: { period: 'monthly' }, hold: { period: p2, amount: tokens(1) }, atMs: T_MS }),
          /hold\.tokens/,
          'an unceilinged hold onto a full period',
        );
        assert.deepEqual(await snapshotTenant(handle, { periods: [p2, p3] }), held, 'refused holds and carries wrote nothing');
        await assertRefusedWithoutWrites(
          handle,
          { periods: [p2] },
          () => handle.reserve({ run: runId(603), quota, hold: { period: p2, amount: tokens(1) }, atMs: T_MS }),
          'SpentOut',
          { reserved: MAX, requested: 1, limit: MAX },
          'one more token on a full period',
        );
      },
    },
    {
      id: 'P7.2',
      title: 'an admission whose hold formula passes Number.MAX_SAFE_INTEGER is INVALID_ARGUMENT naming the budget field',
      async run(context) {
        const handle = acme(context);
        const before = await snapshotTenant(handle, { runs: [runId(610)] });
        await assertRejectsWithMessage(
          () =>
            handle.admit(admission(runId(610), { budget: { maxTokens: MAX, maxCallTokens: 1 }, width: 1, quota: tokenQuota(MAX) })),
          /budget\.maxTokens: .*9007199254740992.*9007199254740991/,
          'admission with maxTokens MAX and one call in flight',
        );
        assert.deepEqual(await snapshotTenant(handle, { runs: [runId(610)] }), before, 'the refused admission wrote nothing');
      },
    },
  ],
};

async function assertRejectsWithMessage(action: () => Promise<unknown>, message: RegExp, what: string): Promise<void> {
  await assert.rejects(action, (error: unknown) => {
    assert.equal((error as { code?: unknown }).code, 'INVALID_ARGUMENT', `${what}: the error code`);
    assert.match((error as Error).message, message, `${what}: the message`);
    return true;
  }, what);
}
