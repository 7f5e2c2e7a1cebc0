import assert from 'node:assert/strict';

import { assertOk, assertRefused } from './assertions.js';
import { ACME, admission, configure, LEASE_MS, runId, tokens } from './fixtures.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Period figures are lossless across period kinds (docs/design/rules.md#l80–#l83).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const MAR_9 = Date.UTC(2026, 2, 9, 12);
const MAR_10 = Date.UTC(2026, 2, 10, 12);
const MAR_11 = Date.UTC(2026, 2, 11, 12);
const BUDGET = { maxTokens: 100, maxCallTokens: 0 };
const daily = (maxTokensPerPeriod: number) => ({ period: 'daily', maxTokensPerPeriod }) as const;
const monthly = (maxTokensPerPeriod: number) => ({ period: 'monthly', maxTokensPerPeriod }) as const;

/** L80–L83: switching daily ↔ monthly never forgets or double-counts settled spend or a standing hold. */
export const periodKindsLossless: ConformanceGroup = {
  title: 'period figures are lossless across period kinds',
  steps: [
    {
      id: 'L80',
      title: 'daily 100 settled on 2026-03-09, monthly from 2026-03-10: an admission asking 100 is SpentOut and March shows 100',
      async run(context) {
        const handle = acme(context);
        await configure(handle, daily(100), MAR_9);
        const a = assertOk(await handle.admit(admission(runId(800), { budget: BUDGET, atMs: MAR_9 })), 'admit on 2026-03-09');
        assert.equal(a.period, '2026-03-09', 'daily period');
        await handle.settlePass({ run: runId(800), epoch: 1, spend: tokens(100), concludes: true, atMs: MAR_9 + 1000 });
        await configure(handle, monthly(100), MAR_10);
        assertRefused(
          await handle.admit(admission(runId(801), { budget: BUDGET, atMs: MAR_10 })),
          'SpentOut',
          { period: '2026-03', settled: 100, requested: 100, limit: 100 },
          'admission asking 100 under monthly on 2026-03-10',
        );
        assert.deepEqual(await handle.spent('2026-03'), tokens(100), "spent('2026-03')");
        assert.deepEqual(await handle.spent('2026-03-09'), tokens(100), "spent('2026-03-09')");
      },
    },
    {
      id: 'L81',
      title: 'monthly spend settled on a day counts in that day when daily comes back, and never twice in the month',
      async run(context) {
        const handle = acme(context);
        await configure(handle, monthly(1000), MAR_10);
        assertOk(await handle.admit(admission(runId(802), { budget: { maxTokens: 300, maxCallTokens: 0 }, atMs: MAR_10 })), 'admit monthly');
        await handle.settlePass({ run: runId(802), epoch: 1, spend: tokens(60), concludes: true, atMs: MAR_10 + 1000 });
        assert.deepEqual(await handle.spent('2026-03'), tokens(160), 'March: 100 + 60');
        assert.deepEqual(await handle.spent('2026-03-10'), tokens(60), 'the 10th: 60');
        await configure(handle, daily(100), MAR_10 + 2000);
        assertRefused(
          await handle.admit(admission(runId(803), { budget: { maxTokens: 41, maxCallTokens: 0 }, atMs: MAR_10 + 3000 })),
          'SpentOut',
          { period: '2026-03-10', settled: 60, requested: 41, limit: 100 },
          'daily on the 10th sees the 60 settled under monthly',
        );
        assertOk(
          await handle.admit(admission(runId(804), { budget: { maxTokens: 40, maxCallTokens: 0 }, atMs: MAR_10 + 3000 })),
          'an exact fill of the 10th',
        );
      },
    },
    {
      id: 'L82',
      title: 'a hold standing across a switch counts once in the day and once in the month, then its settle replaces it',
      async run(context) {
        const handle = acme(context);
        // 804 holds 40 in 2026-03-10 (daily). Switch to monthly: March sees settled 160 + held 40.
        await configure(handle, monthly(300), MAR_10 + 4000);
        assertRefused(
          await handle.admit(admission(runId(805), { budget: { maxTokens: 101, maxCallTokens: 0 }, atMs: MAR_10 + 5000 })),
          'SpentOut',
          { period: '2026-03', settled: 160, reserved: 40, requested: 101, limit: 300 },
          'monthly sees the daily hold standing',
        );
        assert.deepEqual(await handle.reserved('2026-03'), tokens(40), 'March reserved');
        assert.deepEqual(await handle.reserved('2026-03-10'), tokens(40), 'the 10th reserved');
        // A monthly hold taken on the 10th counts in the 10th when daily returns.
        assertOk(await handle.admit(admission(runId(806), { budget: { maxTokens: 50, maxCallTokens: 0 }, atMs: MAR_10 + 6000 })), 'monthly hold');
        assert.deepEqual(await handle.reserved('2026-03'), tokens(90), 'March reserved, both holds');
        assert.deepEqual(await handle.reserved('2026-03-10'), tokens(90), 'the 10th reserved, both holds');
        assert.deepEqual(await handle.reserved('2026-03-11'), tokens(0), 'the 11th holds nothing');
        await handle.settlePass({ run: runId(804), epoch: 1, spend: tokens(40), concludes: true, atMs: MAR_10 + 7000 });
        await handle.settlePass({ run: runId(806), epoch: 1, spend: tokens(50), concludes: true, atMs: MAR_11 });
        assert.deepEqual(await handle.spent('2026-03'), tokens(250), 'March: 160 + 40 + 50, nothing twice');
        assert.deepEqual(await handle.spent('2026-03-10'), tokens(150), 'the 10th: 60 + 40 + 50 (806 started on the 10th)');
        assert.deepEqual(await handle.reserved('2026-03'), tokens(0), 'no hold left in March');
        assert.deepEqual(await handle.reserved('2026-03-10'), tokens(0), 'no hold left on the 10th');
      },
    },
    {
      id: 'L83',
      title: 'a ceiling introduced mid-period counts what the period already spent with no ceiling',
      async run(context) {
        const handle = context.store.tenant('initech');
        await configure(handle, { period: 'monthly' }, MAR_9);
        assertOk(await handle.admit(admission(runId(810), { atMs: MAR_9 })), 'admit with no ceiling');
        await handle.settlePass({ run: runId(810), epoch: 1, spend: tokens(70), concludes: true, atMs: MAR_9 + 1 });
        await configure(handle, daily(100), MAR_9 + 2);
        assertRefused(
          await handle.admit(admission(runId(811), { budget: { maxTokens: 31, maxCallTokens: 0 }, atMs: MAR_9 + 3 })),
          'SpentOut',
          { period: '2026-03-09', settled: 70, requested: 31, limit: 100 },
          'the new daily ceiling counts the 70 spent today',
        );
        await configure(handle, monthly(100), MAR_9 + 4);
        assertRefused(
          await handle.admit(admission(runId(812), { budget: { maxTokens: 31, maxCallTokens: 0 }, atMs: MAR_9 + 5, leaseMs: LEASE_MS })),
          'SpentOut',
          { period: '2026-03', settled: 70, requested: 31, limit: 100 },
          'the new monthly ceiling counts the 70 spent this month',
        );
      },
    },
  ],
};
