import assert from 'node:assert/strict';

import { assertOk, assertRefused } from './assertions.js';
import type { QuotaStore } from '../../store/store.js';
import { ACME, admission, auditEntry, configure, dispatchKey, GLOBEX, JAN_MS, LEASE_MS, OPS_ALICE, runId, tokens } from './fixtures.js';
import { summaryOf } from './leases.js';
import { countedDispatches } from './no-writes.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Tenant, agent and revision halts thrown to reach running work, and the plane-wide halt
// (docs/design/rules.md#c44–#c50).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const GRANT = 'tool://payments/refund';
const CLERK = { name: 'payments-clerk', digest: 'c'.repeat(64) };
const TRIAGE = { name: 'triage', digest: 'd'.repeat(64) };
const CLERK_RUN = runId(700);
const TRIAGE_RUN = runId(701);
const AGENT_HALT = { kind: 'agent', name: CLERK.name } as const;

/** C44–C48: a halt that reaches running work withholds the running runs it covers, and only those. */
export const haltsReachRunningWork: ConformanceGroup = {
  title: 'a halt thrown to reach running work withholds the runs it covers',
  steps: [
    {
      id: 'C44',
      title: 'an agent halt that reaches running work: heartbeat, dispatch and resume answer Withheld naming its scope, a run of another agent runs on',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 5 });
        assertOk(await handle.admit(admission(CLERK_RUN, { agent: CLERK, chain: ['alice'] })), 'admit the clerk');
        assertOk(await handle.admit(admission(TRIAGE_RUN, { agent: TRIAGE, chain: ['alice'] })), 'admit triage');
        await handle.setHalt({ scope: AGENT_HALT, reason: 'loops on refunds', by: OPS_ALICE, atMs: JAN_MS + 10, reachesRunning: true });
        const [standing] = await handle.halts();
        assert.equal(standing?.reachesRunning, true, 'the halt reads back as reaching running work');
        const expected = { tenant: ACME, scope: 'agent:payments-clerk', reason: 'loops on refunds' };
        const beat = assertRefused(await handle.heartbeat({ run: CLERK_RUN, epoch: 1, atMs: JAN_MS + 20, leaseMs: LEASE_MS }), 'Withheld', expected, 'heartbeat');
        assert.equal(beat.subject, undefined, 'no subject: an agent halt withdrew nobody');
        assert.equal((await summaryOf(handle, CLERK_RUN)).status, 'withheld', 'the clerk is withheld');
        const before = await countedDispatches(handle, GRANT, JAN_MS + 30);
        const dispatch = { grant: GRANT, ceilings: [], exempt: false, atMs: JAN_MS + 30, epoch: 1, leaseMs: LEASE_MS };
        assertRefused(await handle.dispatch({ ...dispatch, run: CLERK_RUN, dispatch: dispatchKey(1) }), 'Withheld', expected, 'dispatch');
        assert.equal(await countedDispatches(handle, GRANT, JAN_MS + 30), before, 'the withheld dispatch counted nothing');
        assertOk(await handle.heartbeat({ run: TRIAGE_RUN, epoch: 1, atMs: JAN_MS + 20, leaseMs: LEASE_MS }), 'triage heartbeats');
        assertOk(await handle.dispatch({ ...dispatch, run: TRIAGE_RUN, dispatch: dispatchKey(2) }), 'triage dispatches');
        assert.equal((await summaryOf(handle, TRIAGE_RUN)).status, 'running', 'triage runs on');
        const settled = await handle.settlePass({ run: CLERK_RUN, epoch: 1, spend: tokens(2), concludes: false, atMs: JAN_MS + 40 });
        assert.equal(settled.outcome, 'settled', 'the clerk pauses');
        assertRefused(await handle.resume({ run: CLERK_RUN, atMs: JAN_MS + 50, leaseMs: LEASE_MS }), 'Withheld', expected, 'resume');
        assert.equal((await handle.getRun(CLERK_RUN))?.lastEpoch, 1, 'the withheld resume opened no pass');
      },
    },
    {
      id: 'C46',
      title: 'a halt thrown without reaching running work (the default) leaves running runs alone',
      async run(context) {
        const handle = acme(context);
        await handle.setHalt({ scope: { kind: 'tenant' }, reason: 'stop new work', by: OPS_ALICE, atMs: JAN_MS + 60 });
        assertOk(await handle.heartbeat({ run: TRIAGE_RUN, epoch: 1, atMs: JAN_MS + 70, leaseMs: LEASE_MS }), 'triage heartbeats');
        assert.equal((await handle.halts()).find((halt) => halt.scope.kind === 'tenant')?.reachesRunning, undefined, 'the tenant halt reads back without reach');
        assert.equal(await handle.liftHalt({ kind: 'tenant' }), true, 'lift the tenant halt');
      },
    },
    {
      id: 'C47',
      title: 'after the lift a resume continues the withheld run, which heartbeats again',
      async run(context) {
        const handle = acme(context);
        const [standing] = await handle.halts();
        assert.ok(standing !== undefined, 'the agent halt stands');
        assert.equal(await handle.liftHaltIf(standing), true, 'the conditional lift compares the reach too');
        const pass = assertOk(await handle.resume({ run: CLERK_RUN, atMs: JAN_MS + 80, leaseMs: LEASE_MS }), 'resume after the lift');
        assert.equal(pass.epoch, 2, 'epoch');
        assertOk(await handle.heartbeat({ run: CLERK_RUN, epoch: 2, atMs: JAN_MS + 90, leaseMs: LEASE_MS }), 'heartbeat of pass 2');
        assert.equal((await summaryOf(handle, CLERK_RUN)).status, 'running', 'running again');
      },
    },
    {
      id: 'C48',
      title: 'a tenant halt that reaches running work withholds every running run; a revision halt only its digest; a heartbeat after the lift runs on',
      async run(context) {
        const handle = acme(context);
        await handle.setHalt({ scope: { kind: 'revision', digest: TRIAGE.digest }, reason: 'bad revision', by: OPS_ALICE, atMs: JAN_MS + 100, reachesRunning: true });
        assertOk(await handle.heartbeat({ run: CLERK_RUN, epoch: 2, atMs: JAN_MS + 110, leaseMs: LEASE_MS }), 'the clerk is another revision');
        assertRefused(
          await handle.heartbeat({ run: TRIAGE_RUN, epoch: 1, atMs: JAN_MS + 110, leaseMs: LEASE_MS }),
          'Withheld',
          { scope: `revision:${TRIAGE.digest}`, reason: 'bad revision' },
          'triage under the revision halt',
        );
        await handle.setHalt({ scope: { kind: 'tenant' }, reason: 'incident 7', by: OPS_ALICE, atMs: JAN_MS + 120, reachesRunning: true });
        assertRefused(
          await handle.heartbeat({ run: CLERK_RUN, epoch: 2, atMs: JAN_MS + 130, leaseMs: LEASE_MS }),
          'Withheld',
          { scope: 'tenant', reason: 'incident 7' },
          'the clerk under the tenant halt',
        );
        assertRefused(
          await handle.heartbeat({ run: TRIAGE_RUN, epoch: 1, atMs: JAN_MS + 130, leaseMs: LEASE_MS }),
          'Withheld',
          { scope: `revision:${TRIAGE.digest}` },
          'the narrowest halt that reaches running work is named',
        );
        assert.equal(await handle.liftHalt({ kind: 'tenant' }), true, 'lift the tenant halt');
        assert.equal(await handle.liftHalt({ kind: 'revision', digest: TRIAGE.digest }), true, 'lift the revision halt');
        assertOk(await handle.heartbeat({ run: CLERK_RUN, epoch: 2, atMs: JAN_MS + 140, leaseMs: LEASE_MS }), 'the clerk heartbeats again');
        assertOk(await handle.heartbeat({ run: TRIAGE_RUN, epoch: 1, atMs: JAN_MS + 140, leaseMs: LEASE_MS }), 'triage heartbeats again');
        assert.equal((await summaryOf(handle, TRIAGE_RUN)).status, 'running', 'a withheld run whose halt went runs again');
      },
    },
  ],
};

const GLOBEX_RUN = runId(702);
const PLANE_CHAIN = 'quotaplane:plane';
const PLANE_HALT = { scope: { kind: 'plane' }, reason: 'provider outage', by: OPS_ALICE, atMs: JAN_MS + 10 } as const;

type PlaneHaltMethods = Required<Pick<QuotaStore, 'getPlaneHalt' | 'setPlaneHalt' | 'liftPlaneHaltIf'>>;

/** The store's plane-wide halt; a store without it fails the case naming what is missing. */
function planeHaltOf(store: QuotaStore): PlaneHaltMethods {
  assert.ok(
    store.getPlaneHalt !== undefined && store.setPlaneHalt !== undefined && store.liftPlaneHaltIf !== undefined,
    'the store has no plane-wide halt (getPlaneHalt, setPlaneHalt, liftPlaneHaltIf)',
  );
  return store as unknown as PlaneHaltMethods;
}

/** C49, C50: the plane-wide halt over every tenant of the store. */
export const planeWideHalt: ConformanceGroup = {
  title: 'the plane-wide halt stops every tenant',
  steps: [
    {
      id: 'C49',
      title: 'the plane-wide halt refuses admission in every tenant, naming scope plane unless a narrower halt covers the run; lifted, every tenant admits again',
      async run(context) {
        const plane = planeHaltOf(context.store);
        const acmeStore = acme(context);
        const globex = context.store.tenant(GLOBEX);
        assert.equal(await plane.getPlaneHalt(), null, 'no plane-wide halt at first');
        await plane.setPlaneHalt(PLANE_HALT, auditEntry('plane.halt', 'plane', JAN_MS + 10, { reason: PLANE_HALT.reason }), PLANE_CHAIN);
        assert.deepEqual(await plane.getPlaneHalt(), PLANE_HALT, 'the plane-wide halt reads back');
        assert.deepEqual(await acmeStore.halts(), [], "a tenant's own halts do not list it");
        const expected = { scope: 'plane', reason: 'provider outage' };
        assertRefused(await acmeStore.admit(admission(runId(710), { atMs: JAN_MS + 20 })), 'Halted', { tenant: ACME, ...expected }, 'acme');
        assertRefused(await globex.admit(admission(runId(711), { atMs: JAN_MS + 20 })), 'Halted', { tenant: GLOBEX, ...expected }, 'globex');
        await acmeStore.setHalt({ scope: { kind: 'tenant' }, reason: 'acme audit', by: OPS_ALICE, atMs: JAN_MS + 20 });
        assertRefused(await acmeStore.admit(admission(runId(712), { atMs: JAN_MS + 30 })), 'Halted', { scope: 'tenant' }, 'the narrower halt is named');
        assert.equal(await acmeStore.liftHalt({ kind: 'tenant' }), true, 'lift the tenant halt');
        const [audit] = await context.store.tenant(PLANE_CHAIN).auditLog({ limit: 1 });
        assert.equal(audit?.action, 'plane.halt', 'the halt is audited on the plane chain');
        const lifted = await plane.liftPlaneHaltIf(PLANE_HALT, auditEntry('plane.lift', 'plane', JAN_MS + 40), PLANE_CHAIN);
        assert.equal(lifted, true, 'lift the plane-wide halt');
        assert.equal(await plane.getPlaneHalt(), null, 'no plane-wide halt after the lift');
        assertOk(await acmeStore.admit(admission(CLERK_RUN, { atMs: JAN_MS + 50, agent: CLERK })), 'acme admits again');
        assertOk(await globex.admit(admission(GLOBEX_RUN, { atMs: JAN_MS + 50 })), 'globex admits again');
      },
    },
    {
      id: 'C50',
      title: 'the plane-wide halt thrown to reach running work withholds running runs of every tenant; a conditional lift of a stale read removes nothing',
      async run(context) {
        const plane = planeHaltOf(context.store);
        const reaching = { ...PLANE_HALT, atMs: JAN_MS + 60, reachesRunning: true };
        await plane.setPlaneHalt(reaching, auditEntry('plane.halt', 'plane', JAN_MS + 60, { reason: PLANE_HALT.reason }), PLANE_CHAIN);
        assert.deepEqual(await plane.getPlaneHalt(), reaching, 'it reads back as reaching running work');
        const expected = { scope: 'plane', reason: 'provider outage' };
        assertRefused(await acme(context).heartbeat({ run: CLERK_RUN, epoch: 1, atMs: JAN_MS + 70, leaseMs: LEASE_MS }), 'Withheld', { tenant: ACME, ...expected }, 'acme');
        assertRefused(await context.store.tenant(GLOBEX).heartbeat({ run: GLOBEX_RUN, epoch: 1, atMs: JAN_MS + 70, leaseMs: LEASE_MS }), 'Withheld', { tenant: GLOBEX, ...expected }, 'globex');
        assert.equal(await plane.liftPlaneHaltIf(PLANE_HALT, auditEntry('plane.lift', 'plane', JAN_MS + 80), PLANE_CHAIN), false, 'a stale read removes nothing');
        assert.deepEqual(await plane.getPlaneHalt(), reaching, 'the newer halt stands');
        assert.equal(await plane.liftPlaneHaltIf(reaching, auditEntry('plane.lift', 'plane', JAN_MS + 90), PLANE_CHAIN), true, 'lift it as it stands');
        assertOk(await acme(context).heartbeat({ run: CLERK_RUN, epoch: 1, atMs: JAN_MS + 100, leaseMs: LEASE_MS }), 'acme heartbeats again');
        assertOk(await context.store.tenant(GLOBEX).heartbeat({ run: GLOBEX_RUN, epoch: 1, atMs: JAN_MS + 100, leaseMs: LEASE_MS }), 'globex heartbeats again');
      },
    },
  ],
};
