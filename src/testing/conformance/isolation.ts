import assert from 'node:assert/strict';

import { assertOk, assertRejectsWith } from './assertions.js';
import {
  ACME,
  admission,
  auditEntry,
  configure,
  dispatchKey,
  GLOBEX,
  JAN_MS,
  LEASE_MS,
  OPS_ALICE,
  runId,
  slotQuota,
  T_MS,
  tokenQuota,
  tokens,
} from './fixtures.js';
import { countedDispatches } from './no-writes.js';
import type { ConformanceGroup } from './types.js';

// Strict tenant isolation (docs/design/rules.md#l34–#l37): every keyspace is tenant-first, and no
// operation reads, counts or writes another tenant's rows. The same run id is used in both
// tenants on purpose: a key that forgot its tenant would collide.

const X = runId(400);
const PERIOD = '2995-01';
const GRANT = 'tool://conformance/isolation';

/** L34–L37: every keyspace, seen from the other tenant. */
export const tenantIsolation: ConformanceGroup = {
  title: "another tenant's rows are never visible or counted",
  steps: [
    {
      id: 'L34',
      title: "another tenant's slots and holds are neither listed, counted, released nor carried",
      async run(context) {
        const acme = context.store.tenant(ACME);
        const globex = context.store.tenant(GLOBEX);
        assertOk(
          await acme.reserve({ run: X, quota: { ...tokenQuota(100), maxConcurrentRuns: 1 }, hold: { period: PERIOD, amount: tokens(100) }, atMs: T_MS }),
          'acme fills its slot and its period',
        );
        assert.equal(await globex.running(), 0, 'globex running()');
        assert.deepEqual(await globex.runningRuns(100), [], 'globex runningRuns');
        assert.deepEqual(await globex.reservations(100), [], 'globex reservations');
        assert.deepEqual(await globex.reserved(PERIOD), tokens(0), 'globex reserved');
        await globex.release(X);
        await globex.carry(X, '2995-02');
        assert.deepEqual(await acme.runningRuns(100), [X], "acme's slot after globex released the same run id");
        assert.deepEqual(await acme.reservations(100), [{ run: X, period: PERIOD, remaining: tokens(100) }], "acme's hold");
        assertOk(
          await globex.reserve({ run: X, quota: { ...tokenQuota(100), maxConcurrentRuns: 1 }, hold: { period: PERIOD, amount: tokens(100) }, atMs: T_MS }),
          'globex reserves the same run id against its own ceilings',
        );
        assert.deepEqual(await acme.reserved(PERIOD), tokens(100), 'acme reserved');
        assert.deepEqual(await globex.reserved(PERIOD), tokens(100), 'globex reserved');
      },
    },
    {
      id: 'L35',
      title: 'settled totals and receipts are per tenant',
      async run(context) {
        const acme = context.store.tenant(ACME);
        const globex = context.store.tenant(GLOBEX);
        const receipt = { run: X, epoch: 1, period: PERIOD, spend: tokens(30), releaseSlot: true, concludes: false };
        assert.equal(await acme.settle(receipt), 'settled', 'acme settles');
        assert.deepEqual(await globex.spent(PERIOD), tokens(0), 'globex spent');
        assert.equal(await globex.settle({ ...receipt, spend: tokens(70) }), 'settled', 'globex settles the same pass key');
        assert.deepEqual(await acme.spent(PERIOD), tokens(30), 'acme spent');
        assert.deepEqual(await globex.spent(PERIOD), tokens(70), 'globex spent');
        assert.deepEqual(await acme.reserved(PERIOD), tokens(70), 'acme reserved');
        assert.deepEqual(await globex.reserved(PERIOD), tokens(30), 'globex reserved');
        assert.deepEqual(await globex.runningRuns(100), [], 'globex runningRuns');
      },
    },
    {
      id: 'L36',
      title: "another tenant's halts stop nothing and cannot be lifted from here",
      async run(context) {
        const acme = context.store.tenant(ACME);
        const globex = context.store.tenant(GLOBEX);
        const halt = { scope: { kind: 'tenant' }, reason: 'incident 42', by: OPS_ALICE, atMs: JAN_MS } as const;
        await acme.setHalt(halt);
        assert.deepEqual(await globex.halts(), [], 'globex halts');
        assertOk(await globex.admit(admission(runId(401))), 'globex admits while acme is halted');
        assert.equal(await globex.liftHalt(halt.scope), false, 'globex liftHalt');
        assert.equal(await globex.liftHaltIf(halt), false, 'globex liftHaltIf');
        assert.deepEqual(await acme.halts(), [halt], 'acme halts');
        assert.equal(await acme.liftHalt(halt.scope), true, 'acme lifts its own halt');
      },
    },
    {
      id: 'L37',
      title: 'quotas, runs, passes, dispatches and audit rows are per tenant',
      async run(context) {
        const acme = context.store.tenant(ACME);
        const globex = context.store.tenant(GLOBEX);
        await configure(acme, slotQuota(1));
        assert.equal(await globex.getQuota(), null, 'globex quota');
        const run = runId(402);
        assertOk(await acme.admit(admission(run)), 'acme admits');
        assert.equal(await globex.getRun(run), null, 'globex getRun');
        await assertRejectsWith(() => globex.resume({ run, atMs: JAN_MS, leaseMs: LEASE_MS }), 'NOT_FOUND', 'globex resume');
        await assertRejectsWith(
          () => globex.settlePass({ run, epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS }),
          'NOT_FOUND',
          'globex settlePass',
        );
        await assertRejectsWith(
          () => globex.dispatch({ run, grant: GRANT, dispatch: dispatchKey(0), ceilings: [], exempt: false, atMs: JAN_MS }),
          'NOT_FOUND',
          'globex dispatch',
        );
        assertOk(
          await acme.dispatch({ run, grant: GRANT, dispatch: dispatchKey(0), ceilings: [], exempt: false, atMs: JAN_MS }),
          'acme dispatch',
        );
        assert.equal(await countedDispatches(globex, GRANT, JAN_MS), 0, 'globex dispatches');
        assert.equal(await countedDispatches(acme, GRANT, JAN_MS), 1, 'acme dispatches');
        assert.deepEqual(await globex.auditLog({ limit: 10 }), [], 'globex audit log');
        await globex.appendAudit(auditEntry('note', 'tenant', JAN_MS));
        assert.deepEqual(
          (await acme.auditLog({ limit: 10 })).map((record) => record.action),
          ['quota.set'],
          'acme audit log',
        );
        // globex's own admission from L36 does not count against acme's ceiling of one.
        assert.equal(await globex.running(), 1, 'globex running');
      },
    },
  ],
};
