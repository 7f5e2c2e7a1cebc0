import assert from 'node:assert/strict';

import { assertOk } from './assertions.js';
import { ACME, admission, configure, JAN_MS, runId, tokens } from './fixtures.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Overruns are recorded whole and reported (docs/design/rules.md#l90–#l92).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

/** L90–L91: a settle over the pass's hold is recorded whole and answers by how much it ran over. */
export const overrunsReported: ConformanceGroup = {
  title: 'a settle over its hold is recorded whole and says by how much',
  steps: [
    {
      id: 'L90',
      title: 'maxTokens 20000 settling 90,000,000 answers an overrun of 89,980,000 tokens and the period records it all',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxTokensPerPeriod: 2_000_000 });
        const run = runId(900);
        const pass = assertOk(await handle.admit(admission(run, { budget: { maxTokens: 20_000, maxCallTokens: 0 } })), 'admit');
        assert.deepEqual(pass.hold, tokens(20_000), 'hold');
        const settled = await handle.settlePass({ run, epoch: 1, spend: tokens(90_000_000), concludes: true, atMs: JAN_MS + 1 });
        assert.equal(settled.outcome, 'settled');
        assert.deepEqual(settled.overrun, tokens(89_980_000), 'overrun');
        assert.deepEqual(await handle.spent('2026-01'), tokens(90_000_000), 'the whole spend is on the books');
        const retried = await handle.settlePass({ run, epoch: 1, spend: tokens(90_000_000), concludes: true, atMs: JAN_MS + 2 });
        assert.equal(retried.outcome, 'already-settled');
        assert.deepEqual(retried.overrun, tokens(89_980_000), 'an identical retry reports the same overrun');
      },
    },
    {
      id: 'L91',
      title: 'a settle within its hold, or of a pass that held nothing, overran nothing',
      async run(context) {
        const handle = context.store.tenant('globex');
        await configure(handle, { period: 'monthly', maxTokensPerPeriod: 1000 });
        const within = runId(901);
        assertOk(await handle.admit(admission(within, { budget: { maxTokens: 500, maxCallTokens: 0 } })), 'admit');
        const settled = await handle.settlePass({ run: within, epoch: 1, spend: tokens(500), concludes: true, atMs: JAN_MS + 3 });
        assert.deepEqual(settled.overrun, tokens(0), 'an exact fill is no overrun');
        const unbounded = context.store.tenant('initech');
        await configure(unbounded, { period: 'monthly' });
        assertOk(await unbounded.admit(admission(runId(902))), 'admit with no spend ceiling');
        const free = await unbounded.settlePass({ run: runId(902), epoch: 1, spend: tokens(7), concludes: true, atMs: JAN_MS + 4 });
        assert.deepEqual(free.overrun, tokens(0), 'no hold, no overrun');
      },
    },
    {
      id: 'L92',
      title: 'overranPasses lists the passes that ran over their hold, with the overrun, and nothing else',
      async run(context) {
        assert.deepEqual(await acme(context).overranPasses({ limit: 10 }), [
          {
            run: runId(900),
            epoch: 1,
            period: '2026-01',
            spend: tokens(90_000_000),
            hold: tokens(20_000),
            overrun: tokens(89_980_000),
            settledAtMs: JAN_MS + 1,
          },
        ]);
        assert.deepEqual(await context.store.tenant('globex').overranPasses({ limit: 10 }), [], 'within its hold');
        assert.deepEqual(await context.store.tenant('initech').overranPasses({ limit: 10 }), [], 'no hold');
      },
    },
  ],
};
