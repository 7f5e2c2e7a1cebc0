import assert from 'node:assert/strict';

import type { QuotaSettlement } from '../../store/types.js';
import { assertOk } from './assertions.js';
import { ACME, GLOBEX, runId, slotQuota, T_MS, tokenQuota, tokens } from './fixtures.js';
import { assertRefusedWithoutWrites } from './no-writes.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Concurrency slots: the port's reserve, release, running and runningRuns
// (docs/design/rules.md#c1–#c4, #p1–#p6).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const A = runId(1);
const B = runId(2);
const R = runId(3);

/** C1–C3: a ceiling of 0 admits nothing; a full ceiling refuses with the real count; settling frees the slot. */
export const zeroAndFullCeiling: ConformanceGroup = {
  title: 'a zero or full ceiling refuses new runs',
  steps: [
    {
      id: 'C1',
      title: 'a ceiling of 0 refuses a new run with TooManyRuns and writes nothing',
      async run(context) {
        const handle = acme(context);
        await assertRefusedWithoutWrites(
          handle,
          { runs: [A] },
          () => handle.reserve({ run: A, quota: slotQuota(0), atMs: T_MS }),
          'TooManyRuns',
          { tenant: ACME, running: 0, limit: 0 },
          'reserve at ceiling 0',
        );
        assert.equal(await handle.running(), 0, 'running() after the refusal');
      },
    },
    {
      id: 'C2',
      title: 'at ceiling 1 the second run is refused with the running count, not 0',
      async run(context) {
        const handle = acme(context);
        assertOk(await handle.reserve({ run: A, quota: slotQuota(1), atMs: T_MS }), 'reserve A');
        await assertRefusedWithoutWrites(
          handle,
          {},
          () => handle.reserve({ run: B, quota: slotQuota(1), atMs: T_MS }),
          'TooManyRuns',
          { tenant: ACME, running: 1, limit: 1 },
          'reserve B at a full ceiling',
        );
      },
    },
    {
      id: 'C3',
      title: 'settling the admission pass with releaseSlot gives the slot back to the next run',
      async run(context) {
        const handle = acme(context);
        const settlement: QuotaSettlement = {
          run: A,
          epoch: 1,
          period: null,
          spend: tokens(0),
          releaseSlot: true,
          concludes: true,
        };
        assert.equal(await handle.settle(settlement), 'settled', 'settle A');
        assert.deepEqual(await handle.runningRuns(100), [], 'runningRuns after settling A');
        assertOk(await handle.reserve({ run: B, quota: slotQuota(1), atMs: T_MS }), 'reserve B after A settled');
        assert.deepEqual(await handle.runningRuns(100), [B], 'runningRuns after reserving B');
      },
    },
  ],
};

/** C4: reserving one run twice takes one slot; release removes it. */
export const retriedReserve: ConformanceGroup = {
  title: 'a retried reserve takes one slot',
  steps: [
    {
      id: 'C4',
      title: 'reserving the same run twice at ceiling 1 takes one slot, and release frees it',
      async run(context) {
        const handle = acme(context);
        assertOk(await handle.reserve({ run: R, quota: slotQuota(1), atMs: T_MS }), 'first reserve of R');
        assertOk(await handle.reserve({ run: R, quota: slotQuota(1), atMs: T_MS + 1000 }), 'retried reserve of R');
        assert.equal(await handle.running(), 1, 'running() after two reserves of one run');
        assert.deepEqual(await handle.runningRuns(100), [R], 'runningRuns(100)');
        await handle.release(R);
        assert.deepEqual(await handle.runningRuns(100), [], 'runningRuns(100) after release');
        assert.equal(await handle.running(), 0, 'running() after release');
      },
    },
  ],
};

/** G1–G3 (docs/design/rules.md#g1–#g3): the guard tests of concurrency. */
export const concurrencyGuards: ConformanceGroup = {
  title: 'guard: concurrency ceilings per run and per tenant',
  steps: [
    {
      id: 'G1',
      title: 'at ceiling 1 the second run waits until the first is released',
      async run(context) {
        const handle = context.store.tenant(ACME);
        const [first, second] = [runId(11), runId(12)];
        assertOk(await handle.reserve({ run: first, quota: slotQuota(1), atMs: T_MS }), 'reserve first');
        await assertRefusedWithoutWrites(
          handle,
          {},
          () => handle.reserve({ run: second, quota: slotQuota(1), atMs: T_MS }),
          'TooManyRuns',
          { running: 1 },
          'reserve second while first runs',
        );
        await handle.release(first);
        assertOk(await handle.reserve({ run: second, quota: slotQuota(1), atMs: T_MS }), 'reserve second after release');
      },
    },
    {
      id: 'G2',
      title: 'the same run reserved twice at ceiling 1 is admitted both times and counted once',
      async run(context) {
        const handle = context.store.tenant('initech');
        const run = runId(21);
        assertOk(await handle.reserve({ run, quota: slotQuota(1), atMs: T_MS }), 'first reserve');
        assertOk(await handle.reserve({ run, quota: slotQuota(1), atMs: T_MS }), 'second reserve');
        assert.equal(await handle.running(), 1, 'running()');
      },
    },
    {
      id: 'G3',
      title: "one tenant's full ceiling never refuses another tenant on the same backend",
      async run(context) {
        const umbrella = context.store.tenant('umbrella');
        const globex = context.store.tenant(GLOBEX);
        assertOk(await umbrella.reserve({ run: runId(31), quota: slotQuota(1), atMs: T_MS }), 'umbrella fills its ceiling');
        await assertRefusedWithoutWrites(
          umbrella,
          {},
          () => umbrella.reserve({ run: runId(32), quota: slotQuota(1), atMs: T_MS }),
          'TooManyRuns',
          { tenant: 'umbrella', running: 1 },
          'a second umbrella run',
        );
        assertOk(await globex.reserve({ run: runId(33), quota: slotQuota(1), atMs: T_MS }), 'globex reserves');
        assert.equal(await umbrella.running(), 1, 'umbrella running()');
        assert.equal(await globex.running(), 1, 'globex running()');
      },
    },
  ],
};

/** P1–P6 (docs/design/rules.md#p1–#p6): reserve and release rules beyond the numbered C cases. */
export const reserveRules: ConformanceGroup = {
  title: 'reserve and release follow the port rules',
  steps: [
    {
      id: 'P1',
      title: 'an unlimited quota still takes a slot, so running() stays truthful',
      async run(context) {
        const handle = acme(context);
        assertOk(await handle.reserve({ run: runId(41), quota: { period: 'monthly' }, atMs: T_MS }), 'reserve unlimited');
        assertOk(
          await handle.reserve({ run: runId(42), quota: { period: 'monthly' }, hold: null, atMs: T_MS }),
          'reserve unlimited with hold null',
        );
        assert.equal(await handle.running(), 2, 'running()');
        assert.deepEqual(await handle.runningRuns(100), [runId(41), runId(42)], 'runningRuns(100)');
        assert.deepEqual(await handle.reservations(100), [], 'no hold without a hold request');
      },
    },
    {
      id: 'P2',
      title: 'a run holding a slot but no hold, retried with a hold, is spend-checked and keeps its slot when refused',
      async run(context) {
        const handle = acme(context);
        const period = '2996-01';
        await assertRefusedWithoutWrites(
          handle,
          { periods: [period] },
          () =>
            handle.reserve({ run: runId(41), quota: tokenQuota(10), hold: { period, amount: tokens(11) }, atMs: T_MS }),
          'SpentOut',
          { period, unit: 'tokens', settled: 0, reserved: 0, requested: 11, limit: 10 },
          'retry of a slot holder with a hold that does not fit',
        );
        assert.ok((await handle.runningRuns(100)).includes(runId(41)), 'the refused retry kept its slot');
        assertOk(
          await handle.reserve({ run: runId(41), quota: tokenQuota(10), hold: { period, amount: tokens(10) }, atMs: T_MS }),
          'retry with a hold that fits exactly',
        );
        assert.deepEqual(await handle.reservations(100), [{ run: runId(41), period, remaining: tokens(10) }], 'the hold');
      },
    },
    {
      id: 'P3',
      title: 'a run that already holds spend is neither re-checked nor re-held, whatever the retry names',
      async run(context) {
        const handle = acme(context);
        assertOk(
          await handle.reserve({
            run: runId(41),
            quota: tokenQuota(0),
            hold: { period: '2996-02', amount: tokens(500) },
            atMs: T_MS,
          }),
          'retry with another period and amount under a ceiling of 0',
        );
        assert.deepEqual(
          await handle.reservations(100),
          [{ run: runId(41), period: '2996-01', remaining: tokens(10) }],
          'the first hold stands',
        );
        assert.deepEqual(await handle.reserved('2996-02'), tokens(0), 'nothing held in the retry period');
      },
    },
    {
      id: 'P4',
      title: 'release deletes slot and hold together, and releasing nothing is not an error',
      async run(context) {
        const handle = acme(context);
        await handle.release(runId(41));
        assert.deepEqual(await handle.runningRuns(100), [runId(42)], 'runningRuns after release');
        assert.deepEqual(await handle.reservations(100), [], 'reservations after release');
        assert.deepEqual(await handle.reserved('2996-01'), tokens(0), 'reserved after release');
        await handle.release(runId(41));
        await handle.release(runId(49));
      },
    },
    {
      id: 'P5',
      title: 'listings are in ascending run-id order and honour their limit',
      async run(context) {
        const handle = acme(context);
        const period = '2996-03';
        for (const n of [45, 43, 44]) {
          assertOk(
            await handle.reserve({ run: runId(n), quota: tokenQuota(1000), hold: { period, amount: tokens(n) }, atMs: T_MS }),
            `reserve ${runId(n)}`,
          );
        }
        assert.deepEqual(await handle.runningRuns(100), [runId(42), runId(43), runId(44), runId(45)], 'runningRuns(100)');
        assert.deepEqual(await handle.runningRuns(2), [runId(42), runId(43)], 'runningRuns(2)');
        assert.deepEqual(
          await handle.reservations(2),
          [
            { run: runId(43), period, remaining: tokens(43) },
            { run: runId(44), period, remaining: tokens(44) },
          ],
          'reservations(2)',
        );
        assert.deepEqual(await handle.reserved(period), tokens(43 + 44 + 45), 'reserved(period) sums every hold');
      },
    },
    {
      id: 'P6',
      title: 'carry without a hold, or to the period the hold is in, changes nothing',
      async run(context) {
        const handle = acme(context);
        await handle.carry(runId(42), '2996-04');
        await handle.carry(runId(43), '2996-03');
        await handle.carry(runId(49), '2996-04');
        assert.deepEqual(await handle.reserved('2996-04'), tokens(0), 'reserved in the carry target');
        assert.deepEqual(await handle.reserved('2996-03'), tokens(43 + 44 + 45), 'reserved where the holds are');
      },
    },
  ],
};
