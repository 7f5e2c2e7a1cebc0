import assert from 'node:assert/strict';

import type { TenantStore } from '../../store/store.js';
import { ACME, admission, configure, dispatchKey, GLOBEX, JAN_MS, runId, slotQuota, T_MS, tokenQuota, tokens } from './fixtures.js';
import { countedDispatches } from './no-writes.js';
import type { ConformanceGroup } from './types.js';

// Races through two handles of one tenant (docs/design/rules.md#c41, #c42, #x1). Inside one
// process these prove the store serialises its own concurrent calls; each backend's helper adds a
// race across OS processes, the claim of docs/design/decisions.md "Exact across instances".

/** Tallies outcomes by `ok` or refusal code, failing on any code not in `allowed`. */
function tally(outcomes: readonly ({ ok: true } | { ok: false; refusal: { code: string } })[], allowed: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) {
    const key = outcome.ok ? 'ok' : outcome.refusal.code;
    assert.ok(key === 'ok' || key === allowed, `unexpected outcome ${JSON.stringify(outcome)}`);
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** Two handles of one tenant and a way to alternate between them. */
function twoHandles(first: TenantStore, second: TenantStore) {
  return { first, second, pick: (i: number) => (i % 2 === 0 ? first : second) };
}

const RACE_GRANT = 'tool://conformance/race';

/** C41 (`check_rate_race`). */
export const rateRace: ConformanceGroup = {
  title: "two handles race for one tenant's rate window",
  steps: [
    {
      id: 'C41',
      title: 'forty dispatches racing over two handles at ten per hour admit exactly ten',
      async run(context) {
        const handles = twoHandles(context.store.tenant(ACME), context.store.tenant(ACME));
        const outcomes = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            handles.pick(i).reserveRate({
              grant: RACE_GRANT,
              run: runId(1000 + i),
              dispatch: dispatchKey(i),
              ceilings: [{ count: 10, windowSeconds: 3600 }],
              atMs: T_MS,
              exempt: false,
            }),
          ),
        );
        assert.deepEqual(tally(outcomes, 'RateLimited'), { ok: 10, RateLimited: 30 }, 'outcomes');
        assert.equal(await countedDispatches(handles.first, RACE_GRANT, T_MS), 10, 'dispatches counted');
      },
    },
  ],
};

const RACE_PERIOD = '2997-01';

/** C42 (`check_race`). */
export const spendRace: ConformanceGroup = {
  title: "two handles race for one period's spend",
  steps: [
    {
      id: 'C42',
      title: 'twenty holds of 100 racing over two handles for 1000 tokens admit exactly ten',
      async run(context) {
        const handles = twoHandles(context.store.tenant(ACME), context.store.tenant(ACME));
        const outcomes = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            handles.pick(i).reserve({
              run: runId(2000 + i),
              quota: tokenQuota(1000),
              hold: { period: RACE_PERIOD, amount: tokens(100) },
              atMs: T_MS,
            }),
          ),
        );
        assert.deepEqual(tally(outcomes, 'SpentOut'), { ok: 10, SpentOut: 10 }, 'outcomes');
        assert.deepEqual(await handles.first.reserved(RACE_PERIOD), tokens(1000), `reserved(${RACE_PERIOD})`);
        assert.equal(await handles.second.running(), 10, 'running(): a refused hold took no slot');
      },
    },
  ],
};

/** X1 (docs/design/rules.md#x1), run on every backend rather than only PostgreSQL. */
export const slotRace: ConformanceGroup = {
  title: 'two handles race for four slots',
  steps: [
    {
      id: 'X1',
      title: 'sixteen reserves of new runs racing at ceiling 4 admit exactly four',
      async run(context) {
        const handles = twoHandles(context.store.tenant(ACME), context.store.tenant(ACME));
        const outcomes = await Promise.all(
          Array.from({ length: 16 }, (_, i) =>
            handles.pick(i).reserve({ run: runId(3000 + i), quota: slotQuota(4), atMs: T_MS }),
          ),
        );
        assert.deepEqual(tally(outcomes, 'TooManyRuns'), { ok: 4, TooManyRuns: 12 }, 'outcomes');
        assert.equal(await handles.first.running(), 4, 'running()');
        for (const outcome of outcomes) {
          if (!outcome.ok && outcome.refusal.code === 'TooManyRuns') {
            assert.ok(outcome.refusal.running >= 4, `TooManyRuns reports ${outcome.refusal.running}, below the ceiling`);
          }
        }
      },
    },
  ],
};

/** L38–L40: the run-lifecycle composites under the same races (one transaction each, store.ts). */
export const lifecycleRaces: ConformanceGroup = {
  title: 'two handles race through the run lifecycle',
  steps: [
    {
      id: 'L38',
      title: 'sixteen admissions racing at ceiling 4 admit exactly four and record only those runs',
      async run(context) {
        const handles = twoHandles(context.store.tenant(ACME), context.store.tenant(ACME));
        await configure(handles.first, slotQuota(4));
        const runs = Array.from({ length: 16 }, (_, i) => runId(4000 + i));
        const outcomes = await Promise.all(runs.map((run, i) => handles.pick(i).admit(admission(run))));
        assert.deepEqual(tally(outcomes, 'TooManyRuns'), { ok: 4, TooManyRuns: 12 }, 'outcomes');
        const admitted = runs.filter((_, i) => outcomes[i]?.ok === true);
        assert.deepEqual(await handles.second.runningRuns(100), admitted, 'runningRuns');
        for (const [i, run] of runs.entries()) {
          const recorded = (await handles.first.getRun(run)) !== null;
          assert.equal(recorded, outcomes[i]?.ok === true, `${run} is recorded exactly when it was admitted`);
        }
      },
    },
    {
      id: 'L39',
      title: 'one run admitted eight times at once gets one pass, one slot and one hold',
      async run(context) {
        const handles = twoHandles(context.store.tenant(GLOBEX), context.store.tenant(GLOBEX));
        await configure(handles.first, { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 1000 });
        const run = runId(4100);
        const request = admission(run, { budget: { maxTokens: 1000, maxCallTokens: 0 } });
        const outcomes = await Promise.all(Array.from({ length: 8 }, (_, i) => handles.pick(i).admit(request)));
        const [first, ...rest] = outcomes;
        assert.equal(first?.ok, true, `first outcome ${JSON.stringify(first)}`);
        for (const outcome of rest) assert.deepEqual(outcome, first, 'every racer sees the same pass');
        assert.deepEqual(await handles.first.runningRuns(100), [run], 'runningRuns');
        assert.deepEqual(await handles.second.reserved('2026-01'), tokens(1000), 'reserved');
        assert.equal((await handles.first.getRun(run))?.lastEpoch, 1, 'lastEpoch');
      },
    },
    {
      id: 'L40',
      title: 'one pass settled twice at once is charged once',
      async run(context) {
        const handles = twoHandles(context.store.tenant(GLOBEX), context.store.tenant(GLOBEX));
        const settle = { run: runId(4100), epoch: 1, spend: tokens(400), concludes: true, atMs: JAN_MS + 1000 };
        const outcomes = await Promise.all([handles.first.settlePass(settle), handles.second.settlePass(settle)]);
        assert.deepEqual(
          outcomes.map((o) => o.outcome).sort(),
          ['already-settled', 'settled'],
          'one settles, the other finds the receipt',
        );
        assert.deepEqual(outcomes[0]?.receipt, outcomes[1]?.receipt, 'both report the same receipt');
        assert.deepEqual(await handles.first.spent('2026-01'), tokens(400), 'spent');
        assert.deepEqual(await handles.second.reserved('2026-01'), tokens(0), 'reserved');
        assert.deepEqual(await handles.second.runningRuns(100), [], 'runningRuns');
      },
    },
  ],
};
