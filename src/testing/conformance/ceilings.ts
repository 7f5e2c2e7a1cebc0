import assert from 'node:assert/strict';

import type { AgentIdentity } from '../../core/halt-scope.js';
import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import type { QuotaStore, TenantStore } from '../../store/store.js';
import { assertOk, assertRefused } from './assertions.js';
import { ACME, admission, auditEntry, configure, GLOBEX, JAN_MS, LEASE_MS, runId, slotQuota, T_MS, tokens } from './fixtures.js';
import type { ConformanceGroup } from './types.js';

// The plane-wide ceiling and per-agent ceilings (K1–K14 in docs/design/rules.md;
// docs/concepts/ceilings.md#plane-wide-and-per-agent-ceilings). An admission needs room under every
// ceiling covering it — the tenant's ceiling for its agent, the tenant's, the plane-wide one for
// its agent, the plane-wide one — decided in the admitting transaction; the refusal names the
// bound, narrowest first.

/** The audit chain plane-wide changes are appended to (the plane's `PLANE_AUDIT_TENANT`). */
const PLANE_CHAIN = 'quotaplane:plane';
const INITECH = 'initech';
const DIGEST = 'ab'.repeat(32);

/** An agent identity named `name` (one revision). */
export function agentNamed(name: string): AgentIdentity {
  return { name, digest: DIGEST };
}

type PlaneStore = Required<Pick<QuotaStore, 'getPlaneCeiling' | 'setPlaneCeiling' | 'planeUsage'>>;

/** The store's plane-wide methods; a store without them fails the case naming what is missing. */
function planeOf(store: QuotaStore): PlaneStore {
  assert.ok(
    store.getPlaneCeiling !== undefined && store.setPlaneCeiling !== undefined && store.planeUsage !== undefined,
    'the store has no plane-wide ceiling (getPlaneCeiling, setPlaneCeiling, planeUsage)',
  );
  return store as unknown as PlaneStore;
}

async function setPlane(store: QuotaStore, plane: PlaneCeiling, atMs = JAN_MS): Promise<void> {
  await planeOf(store).setPlaneCeiling(plane, auditEntry('plane.set', 'plane', atMs, { new: plane }), PLANE_CHAIN);
}

function agentUsageOf(handle: TenantStore) {
  assert.ok(handle.agentUsage !== undefined, 'the store has no agentUsage');
  return handle.agentUsage.bind(handle);
}

/** Tallies outcomes by ok / refusal code / bound. */
function tally(outcomes: readonly ({ ok: true } | { ok: false; refusal: { code: string; bound?: string } })[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) {
    const key = outcome.ok ? 'ok' : `${outcome.refusal.code}:${outcome.refusal.bound ?? '-'}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

/** K1–K6: the plane-wide ceiling, set and audited, then admissions of several tenants under it. */
export const planeWideCeiling: ConformanceGroup = {
  title: 'the plane-wide ceiling bounds every tenant together',
  steps: [
    {
      id: 'K1',
      title: 'without a plane-wide ceiling nothing is stored, admissions behave as before, and planeUsage counts every tenant',
      async run(context) {
        const plane = planeOf(context.store);
        assert.equal(await plane.getPlaneCeiling(), null, 'getPlaneCeiling before any set');
        for (const [i, tenant] of [ACME, GLOBEX, INITECH].entries()) {
          assertOk(await context.store.tenant(tenant).admit(admission(runId(100 + i))), `${tenant} admission`);
        }
        assert.deepEqual(await plane.planeUsage(['refund-bot']), { running: 3, agents: { 'refund-bot': 0 } }, 'planeUsage');
      },
    },
    {
      id: 'K2',
      title: "setPlaneCeiling stores the ceiling and appends its audit row to the 'quotaplane:plane' chain in one transaction",
      async run(context) {
        const ceiling: PlaneCeiling = { maxConcurrentRuns: 4, weights: { [ACME]: 3 } };
        await setPlane(context.store, ceiling);
        assert.deepEqual(await planeOf(context.store).getPlaneCeiling(), ceiling, 'getPlaneCeiling');
        const [row] = await context.store.tenant(PLANE_CHAIN).auditLog({ limit: 5 });
        assert.equal(row?.action, 'plane.set', 'audit action');
        assert.equal(row?.seq, 1, 'audit seq');
      },
    },
    {
      id: 'K3',
      title: "with 3 of 4 plane slots held, one more run is admitted, then the next of any tenant is TooManyRuns bound 'plane' naming the plane count",
      async run(context) {
        assertOk(await context.store.tenant(GLOBEX).admit(admission(runId(110))), 'the fourth slot');
        const refused = await context.store.tenant(INITECH).admit(admission(runId(111)));
        assertRefused(refused, 'TooManyRuns', { tenant: INITECH, running: 4, limit: 4, bound: 'plane' }, 'a fifth admission');
        const raw = await context.store.tenant(ACME).reserve({ run: runId(112), quota: { period: 'monthly' }, atMs: T_MS });
        assertRefused(raw, 'TooManyRuns', { running: 4, limit: 4, bound: 'plane' }, 'a raw reserve');
        assert.equal(await context.store.tenant(INITECH).getRun(runId(111)), null, 'the refused run is not recorded');
        assert.equal((await planeOf(context.store).planeUsage([])).running, 4, 'planeUsage');
      },
    },
    {
      id: 'K4',
      title: 'a tenant ceiling that binds too is named first (bound tenant), and a retried admission of a run holding a slot is never refused',
      async run(context) {
        await configure(context.store.tenant(ACME), slotQuota(1));
        const refused = await context.store.tenant(ACME).admit(admission(runId(120)));
        assertRefused(refused, 'TooManyRuns', { tenant: ACME, running: 1, limit: 1, bound: 'tenant' }, 'acme at both ceilings');
        assertOk(await context.store.tenant(ACME).admit(admission(runId(100))), 'a retry of the admitted run');
      },
    },
    {
      id: 'K5',
      title: 'a settle, a release and a sweep each give a plane slot back, and another tenant takes it; a resume is never gated',
      async run(context) {
        const acme = context.store.tenant(ACME);
        const globex = context.store.tenant(GLOBEX);
        const initech = context.store.tenant(INITECH);
        await acme.settlePass({ run: runId(100), epoch: 1, spend: tokens(0), concludes: false, atMs: JAN_MS + 10 });
        assertOk(await initech.admit(admission(runId(130))), 'after a settle');
        await globex.release(runId(101));
        assertOk(await initech.admit(admission(runId(131))), 'after a release');
        const lapse = JAN_MS + LEASE_MS;
        assert.deepEqual(await globex.sweepRun({ run: runId(110), atMs: lapse }), { run: runId(110), releasedSlot: true, stranded: true });
        assertOk(await initech.admit(admission(runId(132), { atMs: lapse })), 'after a sweep');
        assertRefused(await globex.admit(admission(runId(133), { atMs: lapse })), 'TooManyRuns', { bound: 'plane', running: 4 }, 'full again');
        assertOk(await acme.resume({ run: runId(100), atMs: lapse, leaseMs: LEASE_MS }), 'a resume of the paused run');
        assert.equal((await planeOf(context.store).planeUsage([])).running, 4, 'a resume takes no slot');
      },
    },
    {
      id: 'K6',
      title: "a plane-wide ceiling per agent bounds that agent's runs of every tenant (bound 'plane-agent'), and no other run",
      async run(context) {
        await setPlane(context.store, { agents: { 'refund-bot': { maxConcurrentRuns: 2 } } });
        const bot = { agent: agentNamed('refund-bot'), atMs: JAN_MS + LEASE_MS };
        assertOk(await context.store.tenant(GLOBEX).admit(admission(runId(140), bot)), 'first refund-bot run');
        assertOk(await context.store.tenant(INITECH).admit(admission(runId(141), bot)), 'second refund-bot run');
        const refused = await context.store.tenant(GLOBEX).admit(admission(runId(142), bot));
        assertRefused(refused, 'TooManyRuns', { tenant: GLOBEX, agent: 'refund-bot', running: 2, limit: 2, bound: 'plane-agent' }, 'a third');
        assertOk(await context.store.tenant(GLOBEX).admit(admission(runId(143), { agent: agentNamed('triage') })), 'another agent');
        assertOk(await context.store.tenant(GLOBEX).admit(admission(runId(144))), 'a run without an agent');
        const usage = await planeOf(context.store).planeUsage(['refund-bot', 'triage']);
        assert.deepEqual(usage.agents, { 'refund-bot': 2, triage: 1 }, 'planeUsage per agent');
      },
    },
  ],
};

/** K7–K10: a tenant's per-agent ceilings, concurrency and spend, inside the tenant's own. */
export const agentCeilings: ConformanceGroup = {
  title: "a tenant's per-agent ceilings bound that agent's runs inside the tenant",
  steps: [
    {
      id: 'K7',
      title: "an agent at its concurrency ceiling is refused TooManyRuns bound 'agent' naming it; other agents and agentless runs are not",
      async run(context) {
        const acme = context.store.tenant(ACME);
        await configure(acme, { period: 'monthly', maxConcurrentRuns: 5, agents: { 'refund-bot': { maxConcurrentRuns: 2 } } });
        const bot = { agent: agentNamed('refund-bot') };
        assertOk(await acme.admit(admission(runId(200), bot)), 'first');
        assertOk(await acme.admit(admission(runId(201), bot)), 'second');
        assertRefused(await acme.admit(admission(runId(202), bot)), 'TooManyRuns', { agent: 'refund-bot', running: 2, limit: 2, bound: 'agent' }, 'third');
        assertOk(await acme.admit(admission(runId(203), { agent: agentNamed('triage') })), 'another agent');
        assertOk(await acme.admit(admission(runId(204))), 'an agentless run');
        assertOk(await acme.admit(admission(runId(205))), 'the tenant’s fifth');
        assertRefused(await acme.admit(admission(runId(206))), 'TooManyRuns', { running: 5, limit: 5, bound: 'tenant' }, 'the sixth');
        const [usage] = await agentUsageOf(acme)(['refund-bot'], '2026-01');
        assert.equal(usage?.running, 2, 'agentUsage running');
        await acme.settlePass({ run: runId(200), epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS + 1 });
        assert.equal((await agentUsageOf(acme)(['refund-bot'], '2026-01'))[0]?.running, 1, 'a concluding settle gives the agent slot back');
      },
    },
    {
      id: 'K8',
      title: "an agent's spend ceiling holds its runs' worst case even when the tenant bounds no spend (Unbounded bound 'agent' without a budget), and refuses SpentOut bound 'agent' with the agent's figures",
      async run(context) {
        const globex = context.store.tenant(GLOBEX);
        await configure(globex, { period: 'monthly', agents: { 'refund-bot': { maxTokensPerPeriod: 1000 } } });
        const bot = agentNamed('refund-bot');
        assertRefused(await globex.admit(admission(runId(210), { agent: bot })), 'Unbounded', { unit: 'tokens', field: 'maxTokens', bound: 'agent', agent: 'refund-bot' }, 'no budget');
        const budget = { maxTokens: 600, maxCallTokens: 0 };
        const first = assertOk(await globex.admit(admission(runId(211), { agent: bot, budget })), 'first hold');
        assert.deepEqual(first.hold, tokens(600), 'the hold');
        const refused = await globex.admit(admission(runId(212), { agent: bot, budget }));
        assertRefused(
          refused,
          'SpentOut',
          { bound: 'agent', agent: 'refund-bot', period: '2026-01', settled: 0, reserved: 600, requested: 600, limit: 1000 },
          'second hold',
        );
        assertOk(await globex.admit(admission(runId(213), { agent: agentNamed('triage') })), 'another agent holds nothing');
        await globex.settlePass({ run: runId(211), epoch: 1, spend: tokens(300), concludes: true, atMs: JAN_MS + 1 });
        assertOk(await globex.admit(admission(runId(214), { agent: bot, budget })), '300 settled + 600 fits 1000');
        const [usage] = await agentUsageOf(globex)(['refund-bot'], '2026-01');
        assert.deepEqual(usage, { agent: 'refund-bot', running: 1, period: '2026-01', settled: tokens(300), reserved: tokens(600) }, 'agentUsage');
        const [day] = await agentUsageOf(globex)(['refund-bot'], '2026-01-05');
        assert.deepEqual(day?.settled, tokens(300), "the agent's settled spend also counts in its day");
      },
    },
    {
      id: 'K9',
      title: "the tenant's spend ceiling still binds an agent under its own (bound 'tenant'), and an agent ceiling of 0 admits none of its runs",
      async run(context) {
        const initech = context.store.tenant(INITECH);
        await configure(initech, {
          period: 'daily',
          maxTokensPerPeriod: 500,
          agents: { 'refund-bot': { maxTokensPerPeriod: 800 }, frozen: { maxConcurrentRuns: 0 } },
        });
        const budget = { maxTokens: 400, maxCallTokens: 0 };
        assertOk(await initech.admit(admission(runId(220), { agent: agentNamed('refund-bot'), budget })), 'first');
        assertRefused(
          await initech.admit(admission(runId(221), { agent: agentNamed('refund-bot'), budget })),
          'SpentOut',
          { bound: 'tenant', reserved: 400, limit: 500, period: '2026-01-05' },
          'the tenant binds first',
        );
        assertRefused(
          await initech.admit(admission(runId(222), { agent: agentNamed('frozen'), budget })),
          'TooManyRuns',
          { bound: 'agent', agent: 'frozen', running: 0, limit: 0 },
          'ceiling 0',
        );
      },
    },
    {
      id: 'K10',
      title: 'an explicit quota given with the admission carries its own agent ceilings',
      async run(context) {
        const handle = context.store.tenant('umbrella');
        const quota = { period: 'monthly' as const, agents: { 'refund-bot': { maxConcurrentRuns: 1 } } };
        assertOk(await handle.admit(admission(runId(230), { agent: agentNamed('refund-bot'), quota })), 'first');
        assertRefused(await handle.admit(admission(runId(231), { agent: agentNamed('refund-bot'), quota })), 'TooManyRuns', { bound: 'agent' }, 'second');
      },
    },
  ],
};

/** K11–K14: the same ceilings under races through several handles. */
export const ceilingRaces: ConformanceGroup = {
  title: 'plane-wide and per-agent ceilings stay exact under races',
  steps: [
    {
      id: 'K11',
      title: 'twenty-four admissions of twenty-four tenants racing under a plane-wide ceiling of 5 admit exactly five',
      async run(context) {
        await setPlane(context.store, { maxConcurrentRuns: 5 });
        // One tenant each, so only the plane-wide decision orders them (no tenant's own lock does).
        const outcomes = await Promise.all(
          Array.from({ length: 24 }, (_, i) => context.store.tenant(`race-${i}`).admit(admission(runId(300 + i)))),
        );
        assert.deepEqual(tally(outcomes), { ok: 5, 'TooManyRuns:plane': 19 }, 'outcomes');
        assert.equal((await planeOf(context.store).planeUsage([])).running, 5, 'planeUsage');
      },
    },
    {
      id: 'K12',
      title: 'sixteen admissions of one agent racing at its tenant ceiling of 3 admit exactly three',
      async run(context) {
        await setPlane(context.store, {});
        const acme = context.store.tenant(ACME);
        await configure(acme, { period: 'monthly', agents: { 'refund-bot': { maxConcurrentRuns: 3 } } });
        const handles = [acme, context.store.tenant(ACME)];
        const outcomes = await Promise.all(
          Array.from({ length: 16 }, (_, i) => (handles[i % 2] as TenantStore).admit(admission(runId(400 + i), { agent: agentNamed('refund-bot') }))),
        );
        assert.deepEqual(tally(outcomes), { ok: 3, 'TooManyRuns:agent': 13 }, 'outcomes');
      },
    },
    {
      id: 'K13',
      title: 'twenty holds of 100 of one agent racing for its 1000 tokens admit exactly ten',
      async run(context) {
        const globex = context.store.tenant(GLOBEX);
        await configure(globex, { period: 'monthly', agents: { 'refund-bot': { maxTokensPerPeriod: 1000 } } });
        const budget = { maxTokens: 100, maxCallTokens: 0 };
        const outcomes = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            context.store.tenant(GLOBEX).admit(admission(runId(500 + i), { agent: agentNamed('refund-bot'), budget })),
          ),
        );
        assert.deepEqual(tally(outcomes), { ok: 10, 'SpentOut:agent': 10 }, 'outcomes');
        const [usage] = await agentUsageOf(globex)(['refund-bot'], '2026-01');
        assert.deepEqual(usage?.reserved, tokens(1000), 'agent reserved');
      },
    },
    {
      id: 'K14',
      title: 'eighteen admissions of one agent in eighteen tenants racing under a plane-wide ceiling of 4 for it admit exactly four',
      async run(context) {
        await setPlane(context.store, { agents: { crawler: { maxConcurrentRuns: 4 } } });
        const outcomes = await Promise.all(
          Array.from({ length: 18 }, (_, i) =>
            context.store.tenant(`crawl-${i}`).admit(admission(runId(600 + i), { agent: agentNamed('crawler') })),
          ),
        );
        assert.deepEqual(tally(outcomes), { ok: 4, 'TooManyRuns:plane-agent': 14 }, 'outcomes');
        assert.deepEqual((await planeOf(context.store).planeUsage(['crawler'])).agents, { crawler: 4 }, 'planeUsage');
      },
    },
  ],
};
