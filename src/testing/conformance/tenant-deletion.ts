import assert from 'node:assert/strict';

import { isQuotaError } from '../../core/errors.js';
import { compareBytewise } from '../../store/byte-order.js';
import { storeHasTenant } from '../../store/known-tenants.js';
import type { CallMeterStore, DeleteTenantOutcome, QuotaStore, TenantStore } from '../../store/store.js';
import { assertOk } from './assertions.js';
import { admission, auditEntry, configure, JAN_MS, LEASE_MS, OPS_ALICE, runId, tokens } from './fixtures.js';
import type { ConformanceGroup } from './types.js';

// A tenant's deletion (store.ts `deleteTenant`; docs/design/rules.md#l95-4–#l95-6). A store
// without the optional capability skips these steps: the plane refuses its deletions; one without
// model-call books (`callMeters`) skips the steps of model calls.

const LEAVING = 'leaving';
const BUDGET = { maxTokens: 100, maxCallTokens: 10 };
const QUOTA = { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 10_000 } as const;
const GRANT = 'tool://payments/refund';
const REQUEST = { atMs: JAN_MS + 10 * LEASE_MS, by: OPS_ALICE, reason: 'customer left' } as const;
const CALL_LEASE_MS = 60_000;

// The store's model-call books, or `undefined` when it keeps none.
function callBooks(store: QuotaStore): CallMeterStore | undefined {
  return store.callMeters?.();
}

// Reserves model call `callId` of `tenant` at `atMs`, for `CALL_LEASE_MS`, and asserts it is admitted.
async function reserveCall(books: CallMeterStore, tenant: string, callId: string, atMs: number, endUser?: string): Promise<void> {
  const outcome = await books.reserveCall(tenant, { callId, model: 'gpt-test', ...(endUser === undefined ? {} : { endUser }), inputTokens: 10, maxOutputTokens: 10, leaseMs: CALL_LEASE_MS, atMs });
  assert.ok(outcome.ok, `reserve ${tenant}/${callId}: expected an admission, got ${JSON.stringify(outcome)}`);
}

async function deletion(handle: TenantStore): Promise<DeleteTenantOutcome | 'unsupported'> {
  if (handle.deleteTenant === undefined) return 'unsupported';
  return handle.deleteTenant(REQUEST);
}

// The CONFLICT a refused deletion throws, with its counts.
async function refusedWith(handle: TenantStore, expected: Readonly<Record<string, number>>, what: string): Promise<void> {
  try {
    await deletion(handle);
  } catch (error) {
    assert.ok(isQuotaError(error, 'CONFLICT'), `${what}: expected CONFLICT, got ${String(error)}`);
    assert.deepEqual(error.details, { tenant: handle.tenant, running: 0, slots: 0, holds: 0, unsettledPasses: 0, waiting: 0, uncollected: 0, openCalls: 0, ...expected }, `${what}: the counts`);
    return;
  }
  assert.fail(`${what}: the deletion was not refused`);
}

/** L95.4–L95.6: a tenant is deleted only when nothing of it acts or holds spend, then is gone but for its chain. */
export const tenantDeletion: ConformanceGroup = {
  title: 'a tenant is deleted but its audit chain, and only when nothing of it still acts',
  steps: [
    {
      id: 'L95.4',
      title: 'a deletion is refused CONFLICT, writing nothing, while the tenant has a running run, a slot, a hold, an unsettled pass or a waiter',
      async run(context) {
        const handle = context.store.tenant(LEAVING);
        if (handle.deleteTenant === undefined) return;
        await configure(handle, QUOTA);
        assertOk(await handle.admit(admission(runId(1), { budget: BUDGET })), 'admit run 1');
        const waiting = await handle.admitOrWait(admission(runId(2), { budget: BUDGET }), { untilMs: JAN_MS + 1000, leaseMs: 1000 });
        assert.ok(!waiting.ok && 'waiting' in waiting, `run 2 waits for the slot, got ${JSON.stringify(waiting)}`);
        const chain = await handle.auditChain({ afterSeq: 0, limit: 100 });
        await refusedWith(handle, { running: 1, slots: 1, holds: 1, waiting: 1 }, 'a running run and a waiter');
        assert.deepEqual(await handle.auditChain({ afterSeq: 0, limit: 100 }), chain, 'a refused deletion appends no audit row');
        assert.deepEqual(await handle.getQuota(), QUOTA, 'nor removes the quota');

        // The waiter gives up; the running run's process dies and the sweep strands it: its slot
        // comes back, but its hold and its pass's unbooked spend still stand in the way.
        await handle.cancelWaiter({ run: runId(2), atMs: JAN_MS + 2000 });
        await handle.sweepRun({ run: runId(1), atMs: JAN_MS + LEASE_MS });
        await refusedWith(handle, { holds: 1, unsettledPasses: 1 }, 'a stranded run');
        // Released, it holds nothing and its pass is not waited for.
        await handle.releaseRun({ run: runId(1), atMs: JAN_MS + LEASE_MS + 1, by: OPS_ALICE });

        // An admission the grant loop refused (the tenant halted when the slot freed) whose caller
        // has not yet come back for the refusal still waits for its answer: deleted under it, its
        // row would be gone and its caller's next look admitted afresh, into a tenant with no quota
        // and no halt. It stands in the way until its caller hears it or its lease lapses.
        const queued = context.store.tenant(`${LEAVING}-queued`);
        await configure(queued, QUOTA);
        assertOk(await queued.admit(admission(runId(6), { budget: BUDGET })), 'admit run 6');
        const terms = { untilMs: JAN_MS + 20 * LEASE_MS, leaseMs: 20 * LEASE_MS };
        const queuedWait = await queued.admitOrWait(admission(runId(7), { budget: BUDGET }), terms);
        assert.ok(!queuedWait.ok && 'waiting' in queuedWait, `run 7 waits, got ${JSON.stringify(queuedWait)}`);
        await queued.setHalt({ scope: { kind: 'tenant' }, reason: 'leaving', by: OPS_ALICE, atMs: JAN_MS + 1 });
        await queued.releaseRun({ run: runId(6), atMs: JAN_MS + 2, by: OPS_ALICE });
        await refusedWith(queued, { uncollected: 1 }, 'a refusal its caller has not heard');
        const heard = await queued.collectWaiter(admission(runId(7), { budget: BUDGET, atMs: JAN_MS + 3 }), terms);
        assert.ok(!heard.ok && 'refusal' in heard && heard.refusal.code === 'Halted', `its caller hears the halt, got ${JSON.stringify(heard)}`);
        assert.notEqual(await deletion(queued), 'unsupported', 'heard, it no longer stands in the way');
        // So does a grant its caller has not collected, of a run an operator released meanwhile:
        // its caller hears that the run was released, not a fresh admission.
        const granted = context.store.tenant(`${LEAVING}-granted`);
        await configure(granted, QUOTA);
        assertOk(await granted.admit(admission(runId(10), { budget: BUDGET })), 'admit run 10');
        await granted.admitOrWait(admission(runId(11), { budget: BUDGET }), terms);
        await granted.settlePass({ run: runId(10), epoch: 1, spend: tokens(1), concludes: true, atMs: JAN_MS + 1 });
        await granted.releaseRun({ run: runId(11), atMs: JAN_MS + 2, by: OPS_ALICE });
        await refusedWith(granted, { uncollected: 1 }, 'a grant its caller has not collected');
        await assert.rejects(granted.collectWaiter(admission(runId(11), { budget: BUDGET, atMs: JAN_MS + 3 }), terms), (error: unknown) => isQuotaError(error, 'CONFLICT'));
        // Its lease lapsed, it no longer stands in the way.
        await granted.deleteTenant?.({ ...REQUEST, atMs: JAN_MS + 21 * LEASE_MS });
        // Nor does one whose caller never came back once its lease lapsed.
        const lapsed = context.store.tenant(`${LEAVING}-lapsed`);
        await configure(lapsed, QUOTA);
        assertOk(await lapsed.admit(admission(runId(8), { budget: BUDGET })), 'admit run 8');
        await lapsed.admitOrWait(admission(runId(9), { budget: BUDGET }), { untilMs: JAN_MS + 2 * LEASE_MS, leaseMs: LEASE_MS });
        await lapsed.setHalt({ scope: { kind: 'tenant' }, reason: 'leaving', by: OPS_ALICE, atMs: JAN_MS + 1 });
        await lapsed.releaseRun({ run: runId(8), atMs: JAN_MS + 2, by: OPS_ALICE });
        assert.notEqual(await deletion(lapsed), 'unsupported', 'a refusal whose lease lapsed does not stand in the way');
      },
    },
    {
      id: 'L95.5',
      title: 'a deletion removes every record of the tenant but its chain, its own keys included, and appends tenant.delete to the chain, in one transaction',
      async run(context) {
        const { store } = context;
        const handle = store.tenant(LEAVING);
        if (handle.deleteTenant === undefined) return;
        const other = store.tenant('staying');
        await configure(other, QUOTA);
        assertOk(await other.admit(admission(runId(3), { budget: BUDGET })), 'admit in another tenant');
        // A concluded run with spend and a dispatch, a paused run holding nothing, a halt.
        assertOk(await handle.admit(admission(runId(4), { budget: BUDGET, atMs: JAN_MS + LEASE_MS + 10 })), 'admit run 4');
        assertOk(await handle.dispatch({ run: runId(4), grant: GRANT, dispatch: 'd-1', ceilings: [{ count: 5, windowSeconds: 60 }], exempt: false, atMs: JAN_MS + LEASE_MS + 20 }), 'dispatch');
        await handle.settlePass({ run: runId(4), epoch: 1, spend: tokens(40), concludes: true, atMs: JAN_MS + LEASE_MS + 30 });
        assertOk(await handle.admit(admission(runId(5), { budget: { maxTokens: 0, maxCallTokens: 0 }, atMs: JAN_MS + LEASE_MS + 40 })), 'admit run 5');
        await handle.settlePass({ run: runId(5), epoch: 1, spend: tokens(0), concludes: false, atMs: JAN_MS + LEASE_MS + 50 });
        await handle.setHalt({ scope: { kind: 'agent', name: 'refunder' }, reason: 'loop', by: OPS_ALICE, atMs: JAN_MS });
        const keys = store.apiKeys?.();
        const key = (n: number, tenant: string) => ({
          id: `key_01JQ0000000000000000000DZ${n}`,
          name: `key-${n}`,
          role: 'runner' as const,
          tenant,
          createdAtMs: JAN_MS,
          hash: String(n).repeat(64),
        });
        await keys?.create(key(1, LEAVING));
        await keys?.create(key(2, 'staying'));
        const chain = await handle.auditChain({ afterSeq: 0, limit: 100 });
        const head = chain[chain.length - 1];
        assert.ok(head !== undefined, 'the tenant has a chain');

        const outcome = await deletion(handle);
        assert.ok(outcome !== 'unsupported');
        assert.deepEqual(outcome.keys, keys === undefined ? [] : [key(1, LEAVING).id], 'the ids of its own keys');
        assert.equal(outcome.audit.seq, head.seq + 1, 'the deletion row follows the chain');
        assert.equal(outcome.audit.action, 'tenant.delete');
        assert.deepEqual(outcome.audit.detail, { reason: 'customer left', quota: QUOTA, keys: outcome.keys });

        assert.equal(await handle.getQuota(), null, 'no quota');
        assert.deepEqual(await handle.runs({ limit: 10 }), [], 'no runs');
        assert.equal(await handle.getRun(runId(4)), null, 'no run record');
        assert.deepEqual(await handle.halts(), [], 'no halts');
        assert.deepEqual(await handle.spent('2026-01'), tokens(0), 'no settled spend');
        assert.deepEqual(await handle.reservations(10), [], 'no holds');
        assert.equal(await handle.running(), 0, 'no slots');
        const room = await handle.rateRoom(GRANT, [{ count: 1, windowSeconds: 3600 }], JAN_MS + LEASE_MS + 60);
        assert.deepEqual(room, { ok: true }, 'no dispatches counted');
        const after = await handle.auditChain({ afterSeq: 0, limit: 100 });
        assert.deepEqual(after.slice(0, chain.length), chain, 'the chain is kept as it was');
        assert.deepEqual(after[chain.length], outcome.audit, 'ending in the deletion row');
        if (keys !== undefined) {
          assert.equal(await keys.findByHash(key(1, LEAVING).hash), null, 'its key is gone');
          assert.notEqual(await keys.findByHash(key(2, 'staying').hash), null, "another tenant's key stays");
        }
        assert.equal(await other.running(), 1, 'another tenant keeps its slot');
        assert.deepEqual(await other.getQuota(), QUOTA, 'and its quota');
      },
    },
    {
      id: 'L95.6',
      title: 'a deleted tenant does not exist until something of it is written again; its chain then continues',
      async run(context) {
        const { store } = context;
        const handle = store.tenant(LEAVING);
        if (handle.deleteTenant === undefined) return;
        assert.equal(await storeHasTenant(store, LEAVING), false, 'hasTenant is false');
        assert.ok(!(await store.tenants()).includes(LEAVING), 'tenants() does not list it');
        assert.ok((await store.tenants()).includes('staying'), 'tenants() lists the others');
        if (store.auditChains !== undefined) {
          const chains = await store.auditChains();
          assert.ok(chains.includes(LEAVING) && chains.includes('staying'), `its chain is still listed among the chains, got ${JSON.stringify(chains)}`);
          assert.deepEqual(chains, [...chains].sort(compareBytewise), 'in byte order');
        }
        const [deleted] = await handle.auditLog({ limit: 1 });
        // Deleted once, it has nothing left to delete: a second deletion (one that raced the first
        // past a caller's check) is refused NOT_FOUND in the store's own transaction, writing nothing.
        await assert.rejects(handle.deleteTenant(REQUEST), (error: unknown) => isQuotaError(error, 'NOT_FOUND'), 'a second deletion is refused');
        assert.deepEqual(await handle.auditLog({ limit: 1 }), [deleted], 'and appends no second deletion row');
        await configure(handle, QUOTA, JAN_MS + 20 * LEASE_MS);
        assert.equal(await storeHasTenant(store, LEAVING), true, 'a quota set again makes it exist');
        assert.ok((await store.tenants()).includes(LEAVING), 'and listed');
        const [next] = await handle.auditLog({ limit: 1 });
        assert.equal(next?.seq, (deleted?.seq ?? 0) + 1, 'its chain continues after the deletion row');
        // Deleted again, then audited by a caller's own row: an audit row after the deletion is a record.
        await handle.deleteTenant({ ...REQUEST, atMs: JAN_MS + 21 * LEASE_MS });
        assert.equal(await storeHasTenant(store, LEAVING), false, 'deleted again');
        await handle.appendAudit(auditEntry('note', 'tenant', JAN_MS + 22 * LEASE_MS));
        assert.equal(await storeHasTenant(store, LEAVING), true, 'a row appended after the deletion makes it known');
      },
    },
    {
      id: 'L95.8',
      title: 'model-call meters or ceilings make a tenant known: listed by tenants(), hasTenant agrees; deleted with them, end users\' meters included',
      async run(context) {
        const { store } = context;
        const books = callBooks(store);
        const metered = store.tenant('calls-metered');
        if (books === undefined || metered.deleteTenant === undefined) return;
        const at = JAN_MS + 30 * LEASE_MS;
        assert.equal(await storeHasTenant(store, 'calls-metered'), false, 'before any call, the tenant does not exist');
        await reserveCall(books, 'calls-metered', 'a', at, 'alice@example.com');
        await books.adjustCall('calls-metered', { callId: 'a', usage: { inputTokens: 1, outputTokens: 1 }, atMs: at + 1 });
        await books.setCallCeilings('calls-configured', { tenant: [{ unit: 'tokens', limit: 100, windowSeconds: 60 }] }, at);
        for (const tenant of ['calls-metered', 'calls-configured']) {
          assert.equal(await storeHasTenant(store, tenant), true, `${tenant}: hasTenant`);
          assert.ok((await store.tenants()).includes(tenant), `${tenant}: listed by tenants()`);
        }
        const subjects = (await books.callStandings('calls-metered', at + 2, 10)).map((standing) => standing.subject);
        assert.ok(subjects.includes('user:alice@example.com'), `the end user has a meter, got ${JSON.stringify(subjects)}`);

        await metered.deleteTenant({ ...REQUEST, atMs: at + 3 });
        assert.equal(await storeHasTenant(store, 'calls-metered'), false, 'deleted, it does not exist');
        assert.ok(!(await store.tenants()).includes('calls-metered'), 'nor is it listed');
        assert.equal(await books.call('calls-metered', 'a'), null, 'its call is gone');
        const left = (await books.callStandings('calls-metered', at + 4, 10)).filter((standing) => standing.subject !== 'tenant');
        assert.deepEqual(left, [], "no meter is left, the end user's included");
        // The ceilings alone make their tenant known until they are removed with no other record left.
        await books.setCallCeilings('calls-configured', null, at + 5);
        assert.equal(await storeHasTenant(store, 'calls-configured'), false, 'ceilings removed, nothing of it is left');
      },
    },
    {
      id: 'L95.9',
      title: 'a deletion is refused CONFLICT while a model call is in flight, naming it; released, or past its deadline, it no longer stands in the way',
      async run(context) {
        const { store } = context;
        const books = callBooks(store);
        const handle = store.tenant('calls-open');
        if (books === undefined || handle.deleteTenant === undefined) return;
        const at = JAN_MS + 40 * LEASE_MS;
        await books.setCallCeilings('calls-open', { tenant: [{ unit: 'requests', limit: 2, windowSeconds: 60 }] }, at);
        await reserveCall(books, 'calls-open', 'a', at + 1);
        await reserveCall(books, 'calls-open', 'b', at + 2);
        const refuse = async (atMs: number, openCalls: number, what: string): Promise<void> => {
          await assert.rejects(
            handle.deleteTenant!({ ...REQUEST, atMs }),
            (error: unknown) => {
              assert.ok(isQuotaError(error, 'CONFLICT'), `${what}: expected CONFLICT, got ${String(error)}`);
              assert.deepEqual(error.details, { tenant: 'calls-open', running: 0, slots: 0, holds: 0, unsettledPasses: 0, waiting: 0, uncollected: 0, openCalls }, `${what}: the counts`);
              assert.match(error.message, /model call\(s\) in flight: release them \(quotaplane calls open calls-open lists them/, `${what}: the message`);
              return true;
            },
            what,
          );
        };
        await refuse(at + 3, 2, 'two calls in flight');
        assert.notEqual(await books.call('calls-open', 'a'), null, 'a refused deletion removes no call');
        assert.deepEqual(await books.callCeilings('calls-open'), { tenant: [{ unit: 'requests', limit: 2, windowSeconds: 60 }] }, 'nor the ceilings');
        await books.releaseCall('calls-open', { callId: 'a', atMs: at + 4 });
        await refuse(at + 5, 1, 'one call in flight');
        // At its deadline the call is over (docs/design/rules.md#m7), booked or not yet.
        await refuse(at + 2 + CALL_LEASE_MS - 1, 1, 'just before its deadline');
        const outcome = await handle.deleteTenant({ ...REQUEST, atMs: at + 2 + CALL_LEASE_MS });
        assert.equal(outcome.audit.action, 'tenant.delete', 'deleted at its deadline');
        assert.equal(await storeHasTenant(store, 'calls-open'), false, 'and gone');
        assert.deepEqual(await books.openCalls('calls-open', 10), [], 'with its calls');
      },
    },
  ],
};
