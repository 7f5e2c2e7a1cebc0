import assert from 'node:assert/strict';

import { MAX_RATE_WINDOW_SECONDS, type RateCeiling } from '../../core/rate.js';
import type { TenantStore } from '../../store/store.js';
import type { RateReservation } from '../../store/types.js';
import { assertOk } from './assertions.js';
import { ACME, dispatchKey, GLOBEX, runId, T_MS } from './fixtures.js';
import { assertRefusedWithoutWrites, countedDispatches } from './no-writes.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Sliding-window rate ceilings through the port's `reserveRate` and `rateRoom`
// (docs/design/rules.md#c31–#c40, #p8, #p9).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const dispatchOf = (
  grant: string,
  run: string,
  key: number,
  ceilings: readonly RateCeiling[],
  atMs: number,
  exempt = false,
): RateReservation => ({ grant, run, dispatch: dispatchKey(key), ceilings, atMs, exempt });

/** Reserves a dispatch that must be refused `RateLimited` with `reached`, and checks it wrote nothing. */
async function assertRateLimited(
  handle: TenantStore,
  reservation: RateReservation,
  reached: number,
  what: string,
  ceiling: RateCeiling | undefined = reservation.ceilings[0],
): Promise<void> {
  await assertRefusedWithoutWrites(
    handle,
    { grants: [{ grant: reservation.grant, atMs: reservation.atMs }] },
    () => handle.reserveRate(reservation),
    'RateLimited',
    { tenant: handle.tenant, grant: reservation.grant, reached, ...(ceiling === undefined ? {} : { ceiling }) },
    what,
  );
}

const REFUND = 'tool://conformance/refund';
const THREE_PER_MINUTE: RateCeiling = { count: 3, windowSeconds: 60 };
const REFUND_RUN = runId(70);

/** C31–C33: a window holding `count` dispatches refuses the next; a present key is neither judged nor added. */
export const fullWindowRefuses: ConformanceGroup = {
  title: 'a full window refuses',
  steps: [
    {
      id: 'C31',
      title: 'three dispatches under a ceiling of three per minute are all admitted',
      async run(context) {
        const handle = acme(context);
        for (const key of [0, 1, 2]) {
          assertOk(
            await handle.reserveRate(dispatchOf(REFUND, REFUND_RUN, key, [THREE_PER_MINUTE], T_MS)),
            `dispatch key ${key}`,
          );
        }
      },
    },
    {
      id: 'C32',
      title: 'a fourth dispatch in the window is refused RateLimited with reached 3 and adds no row',
      async run(context) {
        const handle = acme(context);
        const reservation = dispatchOf(REFUND, REFUND_RUN, 3, [THREE_PER_MINUTE], T_MS);
        await assertRateLimited(handle, reservation, 3, 'dispatch key 3');
        // The oldest counted dispatch (all at T) leaves the window one minute on.
        await assertRefusedWithoutWrites(
          handle,
          { grants: [{ grant: REFUND, atMs: T_MS }] },
          () => handle.reserveRate(reservation),
          'RateLimited',
          { retryAtMs: T_MS + 60_000 },
          'dispatch key 3 again',
        );
      },
    },
    {
      id: 'C33',
      title: 'a dispatch already recorded is admitted unjudged and not counted twice',
      async run(context) {
        const handle = acme(context);
        assertOk(
          await handle.reserveRate(dispatchOf(REFUND, REFUND_RUN, 0, [THREE_PER_MINUTE], T_MS)),
          're-reserve of key 0 on a full window',
        );
        await assertRefusedWithoutWrites(
          handle,
          { grants: [{ grant: REFUND, atMs: T_MS }] },
          () => handle.rateRoom(REFUND, [THREE_PER_MINUTE], T_MS),
          'RateLimited',
          { tenant: ACME, grant: REFUND, ceiling: THREE_PER_MINUTE, reached: 3 },
          'rateRoom(3 per 60 s)',
        );
        assert.equal(await countedDispatches(handle, REFUND, T_MS), 3, 'dispatches counted');
      },
    },
  ],
};

const SAME_CALL = 'tool://conformance/same-call';
const TWO_PER_MINUTE: RateCeiling = { count: 2, windowSeconds: 60 };

/** C34: the key is (run, dispatch), so two runs making the identical call are two dispatches. */
export const sameCallCountsPerRun: ConformanceGroup = {
  title: 'two runs making the same call each count',
  steps: [
    {
      id: 'C34',
      title: 'two runs with the same dispatch key are both counted, so a third is refused',
      async run(context) {
        const handle = acme(context);
        assertOk(await handle.reserveRate(dispatchOf(SAME_CALL, runId(71), 7, [TWO_PER_MINUTE], T_MS)), 'run one');
        assertOk(await handle.reserveRate(dispatchOf(SAME_CALL, runId(72), 7, [TWO_PER_MINUTE], T_MS)), 'run two');
        await assertRateLimited(handle, dispatchOf(SAME_CALL, runId(73), 7, [TWO_PER_MINUTE], T_MS), 2, 'run three');
      },
    },
  ],
};

const BOUNDARY = 'tool://conformance/boundary';
const TWENTY_PER_HOUR: RateCeiling = { count: 20, windowSeconds: 3600 };
/** An hour boundary, 1 760 004 000 s, in ms. */
const HOUR_MS = 1_760_004_000_000;

/** C35–C36: the window slides; a burst either side of an hour boundary is one window, not two. */
export const windowBoundary: ConformanceGroup = {
  title: 'a window boundary does not double the ceiling',
  steps: [
    {
      id: 'C35',
      title: 'twenty dispatches a minute before the hour fill the window for twenty more a minute after it',
      async run(context) {
        const handle = acme(context);
        const before = HOUR_MS - 60_000;
        const after = HOUR_MS + 60_000;
        for (let key = 0; key < 20; key += 1) {
          assertOk(
            await handle.reserveRate(dispatchOf(BOUNDARY, runId(80), key, [TWENTY_PER_HOUR], before)),
            `dispatch ${key} before the hour`,
          );
        }
        for (let key = 20; key < 40; key += 1) {
          await assertRateLimited(
            handle,
            dispatchOf(BOUNDARY, runId(80), key, [TWENTY_PER_HOUR], after),
            20,
            `dispatch ${key} after the hour`,
          );
        }
      },
    },
    {
      id: 'C36',
      title: 'once the burst has aged out of the window a dispatch is admitted again',
      async run(context) {
        const handle = acme(context);
        const later = HOUR_MS - 60_000 + 3_601_000;
        assertOk(await handle.reserveRate(dispatchOf(BOUNDARY, runId(80), 40, [TWENTY_PER_HOUR], later)), 'dispatch 40');
      },
    },
  ],
};

const UNDO = 'tool://conformance/undo';
const ONE_PER_MINUTE: RateCeiling = { count: 1, windowSeconds: 60 };

/**
 * C37: a compensating call is never refused, yet every later check counts it
 * (docs/design/rules.md#c37).
 */
export const undoIsCounted: ConformanceGroup = {
  title: 'an undo is counted, never refused',
  steps: [
    {
      id: 'C37',
      title: 'an exempt dispatch on a full window is admitted and then counted',
      async run(context) {
        const handle = acme(context);
        assertOk(await handle.reserveRate(dispatchOf(UNDO, runId(90), 0, [ONE_PER_MINUTE], T_MS)), 'forward dispatch');
        assertOk(
          await handle.reserveRate(dispatchOf(UNDO, runId(90), 1, [ONE_PER_MINUTE], T_MS, true)),
          'exempt dispatch on the full window',
        );
        await assertRefusedWithoutWrites(
          handle,
          { grants: [{ grant: UNDO, atMs: T_MS }] },
          () => handle.rateRoom(UNDO, [{ count: 2, windowSeconds: 60 }], T_MS),
          'RateLimited',
          { reached: 2 },
          'rateRoom(2 per 60 s)',
        );
      },
    },
  ],
};

const TWO_WINDOWS = 'tool://conformance/two-windows';
const S_MS = 1_760_010_000_000;

/**
 * C38: the prune floor is store-wide, so a narrow declaration never deletes rows a wider one counts
 * (docs/design/rules.md#c38).
 */
export const narrowWindowKeepsWideRows: ConformanceGroup = {
  title: "a narrower window does not prune a wider one's count",
  steps: [
    {
      id: 'C38',
      title: 'rows a 3-per-hour ceiling counts survive a dispatch judged under 20 per minute',
      async run(context) {
        const handle = acme(context);
        const perHour: RateCeiling = { count: 3, windowSeconds: 3600 };
        for (const key of [0, 1, 2]) {
          assertOk(await handle.reserveRate(dispatchOf(TWO_WINDOWS, runId(91), key, [perHour], S_MS)), `dispatch ${key}`);
        }
        assertOk(
          await handle.reserveRate(
            dispatchOf(TWO_WINDOWS, runId(91), 3, [{ count: 20, windowSeconds: 60 }], S_MS + 120_000),
          ),
          'dispatch under 20 per minute',
        );
        await assertRateLimited(
          handle,
          dispatchOf(TWO_WINDOWS, runId(91), 4, [perHour], S_MS + 180_000),
          4,
          'dispatch under 3 per hour',
        );
      },
    },
  ],
};

const WIDE = 'tool://conformance/wide';

/**
 * C39: windows outside 1 s … 31 days are refused UncountableRate before anything is counted
 * (docs/design/rules.md#c39).
 */
export const uncountableWindows: ConformanceGroup = {
  title: 'windows outside one second to 31 days are uncountable',
  steps: [
    {
      id: 'C39',
      title: 'a window of 2 678 401 s or 0 s is UncountableRate; 2 678 400 s is counted',
      async run(context) {
        const handle = acme(context);
        for (const windowSeconds of [MAX_RATE_WINDOW_SECONDS + 1, 0]) {
          const ceiling: RateCeiling = { count: 5, windowSeconds };
          await assertRefusedWithoutWrites(
            handle,
            { grants: [{ grant: WIDE, atMs: T_MS }] },
            () => handle.reserveRate(dispatchOf(WIDE, runId(92), windowSeconds, [ceiling], T_MS)),
            'UncountableRate',
            { grant: WIDE, ceiling },
            `a window of ${windowSeconds} s`,
          );
          await assertRefusedWithoutWrites(
            handle,
            { grants: [{ grant: WIDE, atMs: T_MS }] },
            () => handle.rateRoom(WIDE, [ceiling], T_MS),
            'UncountableRate',
            { ceiling },
            `rateRoom with a window of ${windowSeconds} s`,
          );
        }
        // Window validation comes before counting: a full valid window does not hide a bad one.
        await assertRefusedWithoutWrites(
          handle,
          { grants: [{ grant: WIDE, atMs: T_MS }] },
          () => handle.rateRoom(WIDE, [{ count: 0, windowSeconds: 60 }, { count: 5, windowSeconds: 0 }], T_MS),
          'UncountableRate',
          { ceiling: { count: 5, windowSeconds: 0 } },
          'rateRoom with a full window before a bad one',
        );
        assertOk(
          await handle.reserveRate(
            dispatchOf(WIDE, runId(92), 1, [{ count: 5, windowSeconds: MAX_RATE_WINDOW_SECONDS }], T_MS),
          ),
          'a window of 2 678 400 s',
        );
      },
    },
  ],
};

const SHARED_GRANT = 'tool://conformance/tenants';

/** C40 (`check_rate_tenants`): dispatch rows are counted per tenant. */
export const ratePerTenant: ConformanceGroup = {
  title: 'each tenant counts its own dispatches',
  steps: [
    {
      id: 'C40',
      title: "one tenant's full window does not refuse another tenant on the same grant",
      async run(context) {
        const a = context.store.tenant(ACME);
        const b = context.store.tenant(GLOBEX);
        assertOk(await a.reserveRate(dispatchOf(SHARED_GRANT, runId(93), 0, [ONE_PER_MINUTE], T_MS)), 'tenant A');
        assertOk(await b.reserveRate(dispatchOf(SHARED_GRANT, runId(94), 0, [ONE_PER_MINUTE], T_MS)), 'tenant B');
        await assertRateLimited(a, dispatchOf(SHARED_GRANT, runId(95), 0, [ONE_PER_MINUTE], T_MS), 1, 'tenant A again');
        assert.equal(await countedDispatches(b, SHARED_GRANT, T_MS), 1, "tenant B's count");
      },
    },
  ],
};

/** Rate groups other suites refer to by name: the battery self-test (C43) runs these three against a broken store. */
export const rateGroupsTheSelfTestBreaks = [fullWindowRefuses, windowBoundary, sameCallCountsPerRun] as const;

const EDGES = 'tool://conformance/edges';

/**
 * P8: the store counts exactly what `checkRate` counts (docs/design/rules.md#p8, D6 through a
 * store). P9: a dispatch is recorded no earlier than the grant's latest recorded instant
 * (docs/design/rules.md#p9), so a lagging instance's dispatch leaves the window with the newest.
 */
export const windowEdges: ConformanceGroup = {
  title: 'a window counts rows strictly after its start, future rows included',
  steps: [
    {
      id: 'P8',
      title: 'of rows at t−60 s, t−59 s, t−1 s and t+5 s a minute window at t counts three',
      async run(context) {
        const handle = acme(context);
        for (const [key, offsetMs] of [-60_000, -59_000, -1000, 5000].entries()) {
          assertOk(await handle.reserveRate(dispatchOf(EDGES, runId(96), key, [], T_MS + offsetMs)), `row at ${offsetMs} ms`);
        }
        await assertRefusedWithoutWrites(
          handle,
          { grants: [{ grant: EDGES, atMs: T_MS }] },
          () => handle.rateRoom(EDGES, [{ count: 3, windowSeconds: 60 }], T_MS),
          'RateLimited',
          { reached: 3 },
          'rateRoom(3 per 60 s) at t',
        );
        assertOk(await handle.rateRoom(EDGES, [{ count: 4, windowSeconds: 60 }], T_MS), 'rateRoom(4 per 60 s) at t');
        await assertRateLimited(
          handle,
          dispatchOf(EDGES, runId(96), 9, [{ count: 3, windowSeconds: 60 }], T_MS),
          3,
          'a dispatch at t under 3 per 60 s',
        );
      },
    },
    {
      id: 'P9',
      title: 'a dispatch from a lagging clock is counted at the latest instant already recorded, so skew errs toward refusing',
      async run(context) {
        const handle = acme(context);
        const skewed = 'tool://conformance/skewed';
        const twoPerMinute: RateCeiling = { count: 2, windowSeconds: 60 };
        // One instance's clock runs 5 s ahead; the other's, at t, records its dispatch at t + 5 s.
        assertOk(await handle.reserveRate(dispatchOf(skewed, runId(97), 0, [twoPerMinute], T_MS + 5000)), 'the dispatch at t + 5 s');
        assertOk(await handle.reserveRate(dispatchOf(skewed, runId(97), 1, [twoPerMinute], T_MS)), 'the lagging dispatch at t');
        // At t + 64 s its own instant t would have left a minute window; the recorded one has not.
        const refused = await handle.rateRoom(skewed, [twoPerMinute], T_MS + 64_000);
        assert.deepEqual(
          refused,
          { ok: false, refusal: { code: 'RateLimited', tenant: ACME, grant: skewed, ceiling: twoPerMinute, reached: 2, retryAtMs: T_MS + 65_000 } },
          'rateRoom(2 per 60 s) at t + 64 s counts both dispatches until t + 65 s',
        );
        assertOk(await handle.rateRoom(skewed, [twoPerMinute], T_MS + 65_000), 'rateRoom(2 per 60 s) at t + 65 s');
      },
    },
  ],
};
