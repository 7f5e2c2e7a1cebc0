import assert from 'node:assert/strict';

import type { QuotaEvent } from '../../core/events.js';
import type { QuotaStore, TenantStore } from '../../store/store.js';
import { assertOk } from './assertions.js';
import { admission, auditEntry, configure, FEB_MS, JAN_MS, LEASE_MS, OPS_ALICE, runId, tokens } from './fixtures.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// The event log: spend alerts exactly once, the events of runs and halts (docs/design/rules.md#e1–#e9).

async function events(store: QuotaStore, tenant?: string): Promise<QuotaEvent[]> {
  if (store.eventsAfter === undefined) throw new Error('the store has no event log (eventsAfter)');
  return [...(await store.eventsAfter(0, 1000, tenant))];
}

// What an event is about, in a form a test compares: its type, and its threshold or subject.
function about(event: QuotaEvent): string {
  const data = event.data as Record<string, unknown>;
  const agent = data.agent === null || data.agent === undefined ? '' : ` agent=${String(data.agent)}`;
  if (event.type === 'threshold.crossed') return `threshold ${JSON.stringify(data.threshold)} ${String(data.unit)} ${String(data.period)}${agent}`;
  if (event.type === 'ceiling.reached') return `ceiling ${String(data.unit)} ${String(data.period)}${agent}`;
  return `${event.type} ${String(data.run ?? data.scope)}`;
}

// Admits `run` holding `hold` tokens and settles `spend` tokens at `atMs`.
async function spend(handle: TenantStore, run: string, hold: number, spent: number, atMs = JAN_MS, agent?: string): Promise<void> {
  const identity = agent === undefined ? {} : { agent: { name: agent, digest: 'a'.repeat(64) } };
  assertOk(await handle.admit(admission(run, { budget: { maxTokens: hold, maxCallTokens: 0 }, atMs, ...identity })), `admit ${run}`);
  const settled = await handle.settlePass({ run, epoch: 1, spend: tokens(spent), concludes: true, atMs: atMs + 1 });
  assert.equal(settled.outcome, 'settled', `settle ${run}`);
}

const acme = (context: ConformanceContext) => context.store.tenant('acme');

/** E1–E9: each crossing is one event, under an id derived from what it is about. */
export const spendAlerts: ConformanceGroup = {
  title: 'spend alerts fire once per threshold, period and ceiling; runs and halts have their events',
  steps: [
    {
      id: 'E3',
      title: 'one settle crossing 80 % and 100 % of the ceiling writes two threshold events and ceiling.reached; a retry writes none',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxTokensPerPeriod: 1000 });
        assert.deepEqual(await events(context.store), [], 'nothing before any spend');
        await spend(handle, runId(1), 1000, 500);
        assert.deepEqual(await events(context.store), [], '50 % crosses nothing');
        await spend(handle, runId(2), 500, 600);
        const after = await events(context.store);
        assert.deepEqual(after.map(about), [
          'threshold {"percent":80} tokens 2026-01',
          'threshold {"percent":100} tokens 2026-01',
          'ceiling tokens 2026-01',
          `run.overran ${runId(2)}`,
        ]);
        const [first] = after;
        assert.equal(first?.tenant, 'acme');
        assert.equal(first?.atMs, JAN_MS + 1);
        assert.deepEqual(first?.data, { agent: null, unit: 'tokens', period: '2026-01', threshold: { percent: 80 }, thresholdAmount: 800, ceiling: 1000, settled: 1100 });
        assert.deepEqual(after[3]?.data, { run: runId(2), epoch: 1, agent: null, period: '2026-01', hold: tokens(500), spend: tokens(600), overrun: tokens(100) });
        const retried = await handle.settlePass({ run: runId(2), epoch: 1, spend: tokens(600), concludes: true, atMs: JAN_MS + 5 });
        assert.equal(retried.outcome, 'already-settled');
        assert.deepEqual((await events(context.store)).map((event) => event.id), after.map((event) => event.id), 'a retry writes nothing');
      },
    },
    {
      id: 'E1',
      title: 'event ids are evt_ and 32 hex digits, distinct per subject, and seq increases',
      async run(context) {
        const all = await events(context.store);
        assert.ok(all.length >= 4);
        for (const event of all) assert.match(event.id, /^evt_[0-9a-f]{32}$/);
        assert.equal(new Set(all.map((event) => event.id)).size, all.length, 'distinct subjects, distinct ids');
        for (let index = 1; index < all.length; index += 1) assert.ok((all[index]?.seq ?? 0) > (all[index - 1]?.seq ?? 0), 'seq increases');
      },
    },
    {
      id: 'E4',
      title: 'a new period re-arms every threshold',
      async run(context) {
        const handle = acme(context);
        const before = (await events(context.store)).length;
        await spend(handle, runId(4), 900, 850, FEB_MS);
        const fresh = (await events(context.store)).slice(before);
        assert.deepEqual(fresh.map(about), ['threshold {"percent":80} tokens 2026-02']);
      },
    },
    {
      id: 'E4.1',
      title: "under daily periods each UTC day's ceiling has its thresholds, and a day re-arms them",
      async run(context) {
        const handle = context.store.tenant('daily');
        await configure(handle, { period: 'daily', maxTokensPerPeriod: 100 });
        await spend(handle, runId(40), 90, 85);
        await spend(handle, runId(41), 90, 85, JAN_MS + 86_400_000);
        assert.deepEqual((await events(context.store, 'daily')).map(about), ['threshold {"percent":80} tokens 2026-01-05', 'threshold {"percent":80} tokens 2026-01-06']);
      },
    },
    {
      id: 'E5',
      title: 'a threshold configured after usage crossed it fires once, at configuration; configuring it again fires nothing',
      async run(context) {
        const handle = acme(context);
        const before = (await events(context.store)).length;
        const quota = { period: 'monthly' as const, maxTokensPerPeriod: 1000, alertThresholds: [{ percent: 50 }, { percent: 80 }, { tokens: 2000 }] };
        await configure(handle, quota, FEB_MS + 10);
        const fresh = (await events(context.store)).slice(before);
        assert.deepEqual(fresh.map(about), ['threshold {"percent":50} tokens 2026-02'], 'only the new threshold fires; 80 % had fired');
        assert.equal(fresh[0]?.atMs, FEB_MS + 10);
        await configure(handle, quota, FEB_MS + 11);
        assert.equal((await events(context.store)).length, before + 1, 'configured again: nothing');
        const agents = context.store.tenant('agents');
        await configure(agents, { period: 'monthly', alertThresholds: [] });
        await spend(agents, runId(50), 0, 70, FEB_MS, 'bot');
        await configure(agents, { period: 'monthly', alertThresholds: [], agents: { bot: { maxTokensPerPeriod: 100, alertThresholds: [{ percent: 60 }] }, idle: { maxTokensPerPeriod: 1 } } }, FEB_MS + 12);
        assert.deepEqual((await events(context.store, 'agents')).map(about), ['threshold {"percent":60} tokens 2026-02 agent=bot'], "an agent's threshold set after its usage passed it fires at configuration; an idle agent's nothing");
      },
    },
    {
      id: 'E5.1',
      title: 'alertNow fires what the stored quota finds already crossed, once',
      async run(context) {
        const handle = context.store.tenant('wayne');
        await configure(handle, { period: 'monthly', maxTokensPerPeriod: 100, alertThresholds: [] });
        await spend(handle, runId(30), 90, 90);
        assert.deepEqual(await events(context.store, 'wayne'), [], 'no thresholds, no events');
        assert.ok(handle.alertNow !== undefined, 'alertNow capability');
        await handle.setQuota({ period: 'monthly', maxTokensPerPeriod: 100, alertThresholds: [{ percent: 50 }] }, auditEntry('quota.set', 'quota', JAN_MS + 20, {}));
        await handle.alertNow(JAN_MS + 21);
        await handle.alertNow(JAN_MS + 22);
        const fired = await events(context.store, 'wayne');
        assert.deepEqual(fired.map(about), ['threshold {"percent":50} tokens 2026-01'], 'fired once, by the quota set; alertNow twice adds nothing');
        await context.store.tenant('nobody').alertNow?.(JAN_MS);
        assert.deepEqual(await events(context.store, 'nobody'), [], 'a tenant without a quota fires nothing');
      },
    },
    {
      id: 'E2',
      title: 'thresholds resolve agent → tenant → plane-wide default → 80 % and 100 %; [] fires none; an absolute amount needs no ceiling',
      async run(context) {
        const store = context.store;
        assert.ok(store.setPlaneCeiling !== undefined, 'plane ceiling capability');
        await store.setPlaneCeiling({ alertThresholds: [{ percent: 50 }] }, auditEntry('plane.set', 'plane', JAN_MS, {}), 'quotaplane:plane');
        const globex = store.tenant('globex');
        await configure(globex, { period: 'monthly', maxTokensPerPeriod: 100, agents: { bot: { maxTokensPerPeriod: 40, alertThresholds: [{ tokens: 30 }] } } });
        await spend(globex, runId(10), 40, 60, JAN_MS, 'bot');
        assert.deepEqual((await events(store, 'globex')).map(about), [
          'threshold {"percent":50} tokens 2026-01',
          'threshold {"tokens":30} tokens 2026-01 agent=bot',
          'ceiling tokens 2026-01 agent=bot',
          `run.overran ${runId(10)}`,
        ]);
        const initech = store.tenant('initech');
        await configure(initech, { period: 'monthly', alertThresholds: [] });
        await configure(store.tenant('hooli'), { period: 'monthly', alertThresholds: [{ tokens: 5 }] });
        await spend(initech, runId(11), 0, 1000);
        await spend(store.tenant('hooli'), runId(12), 0, 5);
        assert.deepEqual(await events(store, 'initech'), [], '[] fires none');
        assert.deepEqual((await events(store, 'hooli')).map(about), ['threshold {"tokens":5} tokens 2026-01'], 'no ceiling, an absolute threshold');
      },
    },
    {
      id: 'E6',
      title: 'a stranded run, a halt thrown, and a halt removed have one event each; a lift that removes nothing writes none',
      async run(context) {
        const handle = acme(context);
        const run = runId(20);
        assertOk(await handle.admit(admission(run, { atMs: FEB_MS, budget: { maxTokens: 10, maxCallTokens: 0 } })), 'admit');
        const swept = await handle.sweepRun({ run, atMs: FEB_MS + LEASE_MS + 1 });
        assert.equal(swept.stranded, true);
        await handle.sweepRun({ run, atMs: FEB_MS + LEASE_MS + 2 });
        const halt = { scope: { kind: 'tenant' as const }, reason: 'test', by: OPS_ALICE, atMs: FEB_MS + 3 };
        await handle.setHalt(halt);
        await handle.setHalt(halt);
        assert.equal(await handle.liftHaltIf({ ...halt, reason: 'another' }, { atMs: FEB_MS + 4, by: OPS_ALICE }), false);
        assert.equal(await handle.liftHaltIf(halt, { atMs: FEB_MS + 5, by: OPS_ALICE }), true);
        assert.equal(await handle.liftHaltIf(halt, { atMs: FEB_MS + 6, by: OPS_ALICE }), false);
        const mine = (await events(context.store, 'acme')).filter((event) => event.type === 'run.stranded' || event.type.startsWith('halt.'));
        assert.deepEqual(mine.map((event) => event.type), ['run.stranded', 'halt.set', 'halt.lifted']);
        assert.deepEqual(mine[0]?.data, { run, epoch: 1, leaseExpiredAtMs: FEB_MS + LEASE_MS });
        assert.deepEqual(mine[1]?.data, { scope: 'tenant', reason: 'test', by: OPS_ALICE, thrownAtMs: FEB_MS + 3, reachesRunning: false });
        assert.equal(mine[2]?.atMs, FEB_MS + 5);
        assert.deepEqual((mine[2]?.data as Record<string, unknown>).liftedBy, OPS_ALICE);
      },
    },
    {
      id: 'E8',
      title: 'eventsAfter pages by seq, oldest first, and filters by tenant; newestEvents reads the tail',
      async run(context) {
        const all = await events(context.store);
        assert.ok(context.store.eventsAfter !== undefined);
        const firstTwo = await context.store.eventsAfter(0, 2);
        assert.deepEqual(firstTwo, all.slice(0, 2));
        const rest = await context.store.eventsAfter(firstTwo[1]?.seq ?? 0, 1000);
        assert.deepEqual(rest, all.slice(2));
        assert.ok(all.some((event) => event.tenant !== 'acme'));
        assert.deepEqual(await events(context.store, 'acme'), all.filter((event) => event.tenant === 'acme'));
        assert.ok(context.store.newestEvents !== undefined, 'newestEvents capability');
        assert.deepEqual(await context.store.newestEvents(2), all.slice(-2), 'the newest two, oldest first');
        assert.deepEqual(await context.store.newestEvents(1000, 'acme'), all.filter((event) => event.tenant === 'acme'));
        assert.deepEqual(await context.store.newestEvents(1, 'acme'), all.filter((event) => event.tenant === 'acme').slice(-1));
      },
    },
    {
      id: 'E9',
      title: 'concurrent settles crossing one threshold together write it once',
      async run(context) {
        const handle = context.store.tenant('umbrella');
        await configure(handle, { period: 'monthly', maxTokensPerPeriod: 10_000 });
        const runs = Array.from({ length: 16 }, (_, index) => runId(100 + index));
        for (const run of runs) assertOk(await handle.admit(admission(run, { budget: { maxTokens: 600, maxCallTokens: 0 } })), 'admit');
        await Promise.all(runs.map((run) => handle.settlePass({ run, epoch: 1, spend: tokens(600), concludes: true, atMs: JAN_MS + 7 })));
        assert.deepEqual((await events(context.store, 'umbrella')).map(about), ['threshold {"percent":50} tokens 2026-01'], 'the plane-wide default of E2');
      },
    },
  ],
};
