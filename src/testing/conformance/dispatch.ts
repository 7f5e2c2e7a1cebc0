import assert from 'node:assert/strict';

import type { RateCeiling } from '../../core/rate.js';
import type { TenantStore } from '../../store/store.js';
import type { DispatchRequest } from '../../store/types.js';
import { assertOk, assertRejectsWith } from './assertions.js';
import { ACME, admission, configure, dispatchKey, JAN_MS, runId } from './fixtures.js';
import { assertRefusedWithoutWrites, countedDispatches, snapshotTenant } from './no-writes.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// A run's dispatch: reserveRate with the tenant's configured ceilings for the grant added, read in
// the same transaction (docs/design/rules.md#l24–#l27; store.ts `dispatch`).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const RUN = runId(300);
const LOOKUP = 'tool://crm/lookup';
const REFUND = 'tool://payments/refund';
const perMinute = (count: number): RateCeiling => ({ count, windowSeconds: 60 });

const call = (grant: string, key: number, ceilings: readonly RateCeiling[], exempt = false): DispatchRequest => ({
  run: RUN,
  grant,
  dispatch: dispatchKey(key),
  ceilings,
  exempt,
  atMs: JAN_MS,
});

async function assertDispatchLimited(handle: TenantStore, request: DispatchRequest, ceiling: RateCeiling, reached: number) {
  await assertRefusedWithoutWrites(
    handle,
    { grants: [{ grant: request.grant, atMs: request.atMs }], runs: [request.run] },
    () => handle.dispatch(request),
    'RateLimited',
    { tenant: ACME, grant: request.grant, ceiling, reached },
    `dispatch ${request.grant} key ${request.dispatch.replace(/^0+/, '') || '0'}`,
  );
}

/** L24–L27 and L65: configured and declared ceilings both bind (and only own members of the configuration); keys are idempotent; the run must exist. */
export const dispatchCeilings: ConformanceGroup = {
  title: "dispatch applies the grant's configured ceilings and the declared ones",
  steps: [
    {
      id: 'L24',
      title: 'the configured ceiling binds when it is tighter, and the declared one when it is',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', rateCeilings: { [LOOKUP]: [perMinute(2)], [REFUND]: [perMinute(5)] } });
        assertOk(await handle.admit(admission(RUN)), 'admit');
        assertOk(await handle.dispatch(call(LOOKUP, 0, [perMinute(5)])), 'lookup 0');
        assertOk(await handle.dispatch(call(LOOKUP, 1, [perMinute(5)])), 'lookup 1');
        await assertDispatchLimited(handle, call(LOOKUP, 2, [perMinute(5)]), perMinute(2), 2);
        assertOk(await handle.dispatch(call(REFUND, 0, [perMinute(1)])), 'refund 0');
        await assertDispatchLimited(handle, call(REFUND, 1, [perMinute(1)]), perMinute(1), 1);
      },
    },
    {
      id: 'L25',
      title: 'a recorded dispatch key is admitted again uncounted, and an exempt dispatch is counted but never refused',
      async run(context) {
        const handle = acme(context);
        assertOk(await handle.dispatch(call(LOOKUP, 0, [perMinute(5)])), 'lookup 0 again');
        assert.equal(await countedDispatches(handle, LOOKUP, JAN_MS), 2, 'lookups counted');
        assertOk(await handle.dispatch(call(REFUND, 9, [perMinute(1)], true)), 'an exempt refund on a full window');
        assert.equal(await countedDispatches(handle, REFUND, JAN_MS), 2, 'refunds counted');
      },
    },
    {
      id: 'L26',
      title: 'a changed grant ceiling applies to the very next dispatch',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', rateCeilings: { [LOOKUP]: [perMinute(3)] } });
        assertOk(await handle.dispatch(call(LOOKUP, 2, [])), 'lookup 2 under 3 per minute');
        await assertDispatchLimited(handle, call(LOOKUP, 3, []), perMinute(3), 3);
      },
    },
    {
      id: 'L65',
      title: "a grant named like an object's built-in member (constructor, toString, __proto__) has no configured ceiling unless one is set",
      async run(context) {
        const handle = acme(context);
        for (const [index, grant] of ['constructor', 'toString', '__proto__', 'hasOwnProperty'].entries()) {
          assertOk(await handle.dispatch(call(grant, 40 + index, [])), `dispatch of grant ${grant}`);
        }
      },
    },
    {
      id: 'L27',
      title: 'a dispatch of an unknown run is NOT_FOUND and counts nothing',
      async run(context) {
        const handle = acme(context);
        const probe = { grants: [{ grant: REFUND, atMs: JAN_MS }] };
        const before = await snapshotTenant(handle, probe);
        await assertRejectsWith(
          () => handle.dispatch({ ...call(REFUND, 20, []), run: runId(399) }),
          'NOT_FOUND',
          'dispatch of an unknown run',
        );
        assert.deepEqual(await snapshotTenant(handle, probe), before, 'the NOT_FOUND wrote something');
      },
    },
  ],
};
