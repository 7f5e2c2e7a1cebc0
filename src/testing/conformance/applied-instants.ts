import assert from 'node:assert/strict';

import type { AppliedInstant } from '../../store/types.js';
import { assertOk } from './assertions.js';
import { ACME, admission, dispatchKey, JAN_MS, LEASE_MS, runId, tokens } from './fixtures.js';
import { rejection, summaryOf } from './leases.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Decisions recorded at the instant they are applied (store.ts requests' `applied`;
// docs/design/rules.md#l93, #l94): a request carrying `applied` reads its instant from
// `applied.nowMs()` inside its transaction; `atMs` is then the instant it was asked, and a wait
// past `applied.maxWaitMs` is STORE_UNAVAILABLE with nothing written.

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

/** A clock standing at `nowMs`, with a bound of `maxWaitMs` (default 1 000 ms). */
const appliedAt = (nowMs: number, maxWaitMs = 1_000): AppliedInstant => ({ nowMs: () => nowMs, maxWaitMs });

const R = runId(930);
const LATE = runId(931);
const GRANT = 'tool://search/web';

/** L93–L94: instants are read when the decision is applied; a decision that waited past its bound is not applied. */
export const appliedInstants: ConformanceGroup = {
  title: 'decisions are recorded at the instant they are applied',
  steps: [
    {
      id: 'L93',
      title: 'admission, heartbeat, dispatch, settle and resume asked at atMs and applied later record the instant they were applied',
      async run(context) {
        const handle = acme(context);
        const admitted = assertOk(await handle.admit(admission(R, { atMs: JAN_MS, applied: appliedAt(JAN_MS + 700) })), 'admit');
        assert.equal(admitted.leaseExpiresAtMs, JAN_MS + 700 + LEASE_MS, 'the admission lease runs from the instant it was applied');
        assert.equal((await handle.getRun(R))?.admittedAtMs, JAN_MS + 700, 'admittedAtMs');

        const renewed = await handle.heartbeat({ run: R, epoch: 1, atMs: JAN_MS + 1_000, leaseMs: LEASE_MS, applied: appliedAt(JAN_MS + 1_900) });
        assert.deepEqual(renewed, { ok: true, run: R, epoch: 1, leaseExpiresAtMs: JAN_MS + 1_900 + LEASE_MS }, 'the heartbeat');

        const dispatch = { run: R, grant: GRANT, dispatch: dispatchKey(930), ceilings: [], exempt: false, epoch: 1, leaseMs: LEASE_MS };
        assertOk(await handle.dispatch({ ...dispatch, atMs: JAN_MS + 2_000, applied: appliedAt(JAN_MS + 2_500) }), 'dispatch');
        assert.equal((await summaryOf(handle, R)).leaseExpiresAtMs, JAN_MS + 2_500 + LEASE_MS, 'the dispatch renews from when it was applied');

        await handle.settlePass({ run: R, epoch: 1, spend: tokens(0), concludes: false, atMs: JAN_MS + 3_000, applied: appliedAt(JAN_MS + 3_400) });
        assert.equal((await summaryOf(handle, R)).statusSinceMs, JAN_MS + 3_400, 'paused since the settle was applied');

        const resumed = assertOk(await handle.resume({ run: R, atMs: JAN_MS + 4_000, leaseMs: LEASE_MS, applied: appliedAt(JAN_MS + 4_999) }), 'resume');
        assert.equal(resumed.leaseExpiresAtMs, JAN_MS + 4_999 + LEASE_MS, 'the resumed pass runs from when it was applied');
        // A clock behind the asked instant never moves a decision back before it was asked.
        const behind = await handle.heartbeat({ run: R, epoch: 2, atMs: JAN_MS + 6_000, leaseMs: LEASE_MS, applied: appliedAt(JAN_MS + 5_000) });
        assert.deepEqual(behind, { ok: true, run: R, epoch: 2, leaseExpiresAtMs: JAN_MS + 6_000 + LEASE_MS }, 'never before atMs');
      },
    },
    {
      id: 'L94',
      title: 'a decision applied longer than applied.maxWaitMs after it was asked is STORE_UNAVAILABLE and writes nothing',
      async run(context) {
        const handle = acme(context);
        const late = await rejection(
          () => handle.admit(admission(LATE, { atMs: JAN_MS + 10_000, applied: appliedAt(JAN_MS + 11_001) })),
          'STORE_UNAVAILABLE',
          'an admission that waited 1 001 ms',
        );
        assert.equal(late.details.reason, 'waited-too-long', 'details.reason');
        assert.equal(late.details.maxWaitMs, 1_000, 'details.maxWaitMs');
        assert.equal(await handle.getRun(LATE), null, 'no run registered');
        assert.deepEqual(await handle.runningRuns(10), [], 'no slot taken');

        const lease = (await summaryOf(handle, R)).leaseExpiresAtMs;
        await rejection(
          () => handle.heartbeat({ run: R, epoch: 2, atMs: JAN_MS + 10_000, leaseMs: 10 * LEASE_MS, applied: appliedAt(JAN_MS + 12_000) }),
          'STORE_UNAVAILABLE',
          'a heartbeat that waited 2 000 ms',
        );
        assert.equal((await summaryOf(handle, R)).leaseExpiresAtMs, lease, 'the lease is as it was');
        assertOk(await handle.admit(admission(LATE, { atMs: JAN_MS + 10_000, applied: appliedAt(JAN_MS + 11_000) })), 'within the bound');
      },
    },
  ],
};
