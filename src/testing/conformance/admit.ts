import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';

import type { Halt, HaltScope } from '../../core/halt-scope.js';
import type { TenantQuota } from '../../core/quota.js';
import { instant } from '../../core/instant.js';
import { assertOk, assertRejectsWith } from './assertions.js';
import { ACME, admission, configure, JAN_MS, LEASE_MS, OPS_ALICE, runId, slotQuota, tokenQuota, tokens } from './fixtures.js';
import { assertRefusedWithoutWrites, snapshotTenant } from './no-writes.js';
import type { AdmitRequest } from '../../store/types.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Admission as one transaction (docs/design/decisions.md "The order of admission"; store.ts
// `admit`): halts → quota → hold formula → reserve → run and pass 1 recorded.

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const HALT_AT_MS = 1_767_500_000_000;
const digestOf = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const CLERK_DIGEST = digestOf('payments-clerk 1.0.0');
const CLERK = { name: 'payments-clerk', digest: CLERK_DIGEST };
const CHAIN = ['user:alice', 'workload:scheduler', 'agent:payments-clerk'];

const scopes = {
  tenant: { kind: 'tenant' },
  agent: { kind: 'agent', name: CLERK.name },
  revision: { kind: 'revision', digest: CLERK_DIGEST },
  subject: { kind: 'subject', principal: 'user:alice' },
} satisfies Record<string, HaltScope>;

const haltOn = (scope: HaltScope, reason: string): Halt => ({ scope, reason, by: OPS_ALICE, atMs: HALT_AT_MS });

/** L1–L4: halts are read first, before any ceiling or budget, and the narrowest covering one is named. */
export const admitHaltsFirst: ConformanceGroup = {
  title: 'admit checks halts first and names the narrowest covering halt',
  steps: [
    {
      id: 'L1',
      title: 'a tenant halt refuses admission before a ceiling of 0 is consulted, and writes nothing',
      async run(context) {
        const handle = acme(context);
        await configure(handle, slotQuota(0));
        await handle.setHalt(haltOn(scopes.tenant, 'incident 42: runaway spend'));
        const run = runId(100);
        await assertRefusedWithoutWrites(
          handle,
          { runs: [run] },
          () => handle.admit(admission(run)),
          'Halted',
          {
            tenant: ACME,
            scope: 'tenant',
            reason: 'incident 42: runaway spend',
            by: OPS_ALICE,
            haltedAtMs: HALT_AT_MS,
          },
          'admit under a tenant halt at ceiling 0',
        );
      },
    },
    {
      id: 'L2',
      title: 'a halted run whose budget leaves a bounded unit open is refused Halted, not Unbounded',
      async run(context) {
        const handle = acme(context);
        await configure(handle, tokenQuota(1000));
        const run = runId(101);
        await assertRefusedWithoutWrites(
          handle,
          { runs: [run], periods: ['2026-01'] },
          () => handle.admit(admission(run, { budget: {} })),
          'Halted',
          { scope: 'tenant' },
          'admit with an open budget under a tenant halt',
        );
      },
    },
    {
      id: 'L3',
      title: 'of several covering halts the narrowest is named: subject, then revision, then agent, then tenant',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly' });
        await handle.setHalt(haltOn(scopes.agent, 'agent 12 is looping'));
        await handle.setHalt(haltOn(scopes.revision, 'bad deploy'));
        await handle.setHalt(haltOn(scopes.subject, 'credential withdrawn: laptop lost'));
        const run = runId(102);
        const expectations: [keyof typeof scopes, string, string][] = [
          ['subject', 'subject:user:alice', 'credential withdrawn: laptop lost'],
          ['revision', `revision:${CLERK_DIGEST}`, 'bad deploy'],
          ['agent', 'agent:payments-clerk', 'agent 12 is looping'],
          ['tenant', 'tenant', 'incident 42: runaway spend'],
        ];
        for (const [name, scope, reason] of expectations) {
          await assertRefusedWithoutWrites(
            handle,
            { runs: [run] },
            () => handle.admit(admission(run, { agent: CLERK, chain: CHAIN })),
            'Halted',
            { scope, reason },
            `admit while the ${name} halt is the narrowest standing`,
          );
          assert.equal(await handle.liftHalt(scopes[name]), true, `lift the ${name} halt`);
        }
        assertOk(await handle.admit(admission(run, { agent: CLERK, chain: CHAIN })), 'admit with every halt lifted');
      },
    },
    {
      id: 'L4',
      title: 'halts on another agent, revision or principal do not stop a run',
      async run(context) {
        const handle = acme(context);
        for (const scope of [scopes.agent, scopes.revision, scopes.subject]) {
          await handle.setHalt(haltOn(scope, 'not this run'));
        }
        const other = { name: 'auditor', digest: digestOf('auditor 2.0.0') };
        assertOk(
          await handle.admit(admission(runId(103), { agent: other, chain: ['user:bob', 'agent:auditor'] })),
          'admit another agent acting for another principal',
        );
        assertOk(await handle.admit(admission(runId(104))), 'admit a run with no agent and no chain');
        // Same agent name, another revision: the agent halt still covers it.
        await assertRefusedWithoutWrites(
          handle,
          { runs: [runId(105)] },
          () => handle.admit(admission(runId(105), { agent: { name: CLERK.name, digest: other.digest } })),
          'Halted',
          { scope: 'agent:payments-clerk' },
          'admit another revision of the halted agent',
        );
      },
    },
  ],
};

const BOTH_UNITS: TenantQuota = { period: 'monthly', maxTokensPerPeriod: 1_000_000, maxMinorUnitsPerPeriod: 1_000_000_000 };

/** L5–L9: the hold formula, and refusals of admission that write nothing. */
export const admitHolds: ConformanceGroup = {
  title: 'admit holds the worst case and refuses without writing',
  steps: [
    {
      id: 'L5',
      title: 'Unbounded names the first budget field a bounded unit leaves open, tokens before minor units',
      async run(context) {
        const handle = acme(context);
        await configure(handle, BOTH_UNITS);
        const run = runId(110);
        const cases = [
          [{}, 'tokens', 'maxTokens'],
          [{ maxTokens: 1000 }, 'tokens', 'maxCallTokens'],
          [{ maxTokens: 1000, maxCallTokens: 50 }, 'minor units', 'maxMinorUnits'],
          [{ maxTokens: 1000, maxCallTokens: 50, maxMinorUnits: 2000 }, 'minor units', 'maxCallMinorUnits'],
        ] as const;
        for (const [budget, unit, field] of cases) {
          await assertRefusedWithoutWrites(
            handle,
            { runs: [run], periods: ['2026-01'] },
            () => handle.admit(admission(run, { budget, width: 3 })),
            'Unbounded',
            { tenant: ACME, unit, field },
            `admit with budget ${JSON.stringify(budget)}`,
          );
        }
      },
    },
    {
      id: 'L6',
      title: 'the hold is maxTokens + width × maxCallTokens per bounded unit, in the period admission starts in',
      async run(context) {
        const handle = acme(context);
        const run = runId(111);
        const budget = { maxTokens: 1000, maxCallTokens: 50, maxMinorUnits: 2000, maxCallMinorUnits: 7 };
        const grant = await handle.admit(admission(run, { budget, width: 3, agent: CLERK, chain: CHAIN }));
        const hold = { tokens: 1150, minorUnits: 2021 };
        assert.deepEqual(
          assertOk(grant, 'admit'),
          { ok: true, run, epoch: 1, period: '2026-01', hold, leaseExpiresAtMs: JAN_MS + LEASE_MS },
          'the pass',
        );
        assert.deepEqual(await handle.reservations(100), [{ run, period: '2026-01', remaining: hold }], 'reservations');
        assert.deepEqual(await handle.runningRuns(100), [run], 'runningRuns');
        assert.deepEqual(
          await handle.getRun(run),
          { run, status: 'running', agent: CLERK, chain: CHAIN, admittedAtMs: JAN_MS, lastEpoch: 1 },
          'getRun',
        );
      },
    },
    {
      id: 'L6.1',
      title: "a run id that already holds spend keeps its hold: the admission reports that hold, not the one it asked for",
      async run(context) {
        const handle = context.store.tenant('held-before');
        const run = runId(115);
        await configure(handle, tokenQuota(10_000));
        const held = { period: '2026-01', amount: tokens(50) };
        assertOk(await handle.reserve({ run, quota: tokenQuota(10_000), hold: held, atMs: JAN_MS }), "the port's reserve of 50 for the run id");
        const pass = assertOk(await handle.admit(admission(run, { budget: { maxTokens: 1000, maxCallTokens: 0 } })), 'admit the same run id');
        assert.deepEqual(pass.hold, tokens(50), "the grant reports the run's hold as it stands");
        assert.deepEqual(await handle.reserved('2026-01'), tokens(50), 'nothing was held twice');
      },
    },
    {
      id: 'L7',
      title: 'a unit the quota leaves open is held at 0, and a quota bounding no spend takes no hold',
      async run(context) {
        const handle = acme(context);
        await configure(handle, tokenQuota(1_000_000));
        const tokensOnly = assertOk(
          await handle.admit(admission(runId(112), { budget: { maxTokens: 1000, maxCallTokens: 50 }, width: 2 })),
          'admit under a token-only quota',
        );
        assert.deepEqual(tokensOnly.hold, tokens(1100), 'hold under a token-only quota');
        await configure(handle, slotQuota(10));
        const unbounded = assertOk(await handle.admit(admission(runId(113))), 'admit under a quota bounding no spend');
        assert.equal(unbounded.hold, null, 'hold under a quota bounding no spend');
        assert.equal(unbounded.period, '2026-01', 'period under a quota bounding no spend');
        assert.deepEqual(
          (await handle.reservations(100)).map((held) => held.run),
          [runId(111), runId(112)],
          'reservations: no row for the run without a hold',
        );
        assert.deepEqual(await handle.runningRuns(100), [runId(111), runId(112), runId(113)], 'runningRuns');
      },
    },
    {
      id: 'L8',
      title: 'SpentOut writes nothing, and an exact fill is admitted',
      async run(context) {
        const handle = acme(context);
        await configure(handle, tokenQuota(3000));
        const run = runId(114);
        await assertRefusedWithoutWrites(
          handle,
          { runs: [run], periods: ['2026-01'] },
          () => handle.admit(admission(run, { budget: { maxTokens: 800, maxCallTokens: 0 } })),
          'SpentOut',
          { tenant: ACME, period: '2026-01', unit: 'tokens', settled: 0, reserved: 2250, requested: 800, limit: 3000 },
          'admit holding 800 where 750 remain',
        );
        assertOk(
          await handle.admit(admission(run, { budget: { maxTokens: 750, maxCallTokens: 0 } })),
          'admit holding exactly the 750 that remain',
        );
        assert.equal((await handle.reserved('2026-01')).tokens, 3000, 'tokens reserved');
      },
    },
    {
      id: 'L9',
      title: 'TooManyRuns writes nothing',
      async run(context) {
        const handle = acme(context);
        await configure(handle, slotQuota(4));
        const run = runId(115);
        await assertRefusedWithoutWrites(
          handle,
          { runs: [run], periods: ['2026-01'] },
          () => handle.admit(admission(run)),
          'TooManyRuns',
          { tenant: ACME, running: 4, limit: 4 },
          'admit a fifth run at ceiling 4',
        );
      },
    },
  ],
};

/**
 * L10–L12: admission reads the stored quota inside its own transaction
 * (docs/design/rules.md#l10–#l12).
 */
export const admitReadsQuota: ConformanceGroup = {
  title: 'admit reads the quota inside its transaction',
  steps: [
    {
      id: 'L10',
      title: 'a tenant with no stored quota admits with no ceiling, no hold and monthly periods',
      async run(context) {
        const handle = acme(context);
        assert.equal(await handle.getQuota(), null, 'getQuota');
        const grant = assertOk(await handle.admit(admission(runId(120))), 'admit');
        assert.equal(grant.hold, null, 'hold');
        assert.equal(grant.period, '2026-01', 'period');
      },
    },
    {
      id: 'L11',
      title: 'a setQuota applies to the very next admit',
      async run(context) {
        const handle = acme(context);
        await configure(handle, slotQuota(1));
        const probe = { runs: [runId(121), runId(122)] };
        await assertRefusedWithoutWrites(
          handle,
          probe,
          () => handle.admit(admission(runId(121))),
          'TooManyRuns',
          { running: 1, limit: 1 },
          'at ceiling 1',
        );
        await configure(handle, slotQuota(2));
        assertOk(await handle.admit(admission(runId(121))), 'at ceiling 2');
        await configure(handle, slotQuota(0));
        await assertRefusedWithoutWrites(
          handle,
          probe,
          () => handle.admit(admission(runId(122))),
          'TooManyRuns',
          { running: 2, limit: 0 },
          'at ceiling 0',
        );
        await configure(handle, { period: 'daily', maxTokensPerPeriod: 1_000_000 });
        const daily = assertOk(
          await handle.admit(admission(runId(122), { budget: { maxTokens: 10, maxCallTokens: 1 } })),
          'under a daily quota',
        );
        assert.equal(daily.period, '2026-01-05', 'the period follows the stored quota');
      },
    },
    {
      id: 'L12',
      title: 'a quota given with the request overrides the stored one',
      async run(context) {
        const handle = acme(context);
        await configure(handle, slotQuota(0));
        const overridden = assertOk(
          await handle.admit(admission(runId(123), { quota: { period: 'monthly' } })),
          'an unlimited quota given over a stored ceiling of 0',
        );
        assert.equal(overridden.period, '2026-01', 'period of the given quota');
        await configure(handle, { period: 'monthly' });
        await assertRefusedWithoutWrites(
          handle,
          { runs: [runId(124)] },
          () => handle.admit(admission(runId(124), { quota: slotQuota(0) })),
          'TooManyRuns',
          { limit: 0 },
          'a given ceiling of 0 over a stored unlimited quota',
        );
      },
    },
  ],
};

const RETRIED = runId(130);
const RETRY_BUDGET = { maxTokens: 1000, maxCallTokens: 100 };

/** L13–L14: admission is idempotent per run id; a concluded run cannot be admitted again. */
export const admitIdempotent: ConformanceGroup = {
  title: 'admit is idempotent per run',
  steps: [
    {
      id: 'L13',
      title: 'admitting a run again returns its pass 1 unchanged and takes no second slot or hold',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 1200 });
        const first = assertOk(await handle.admit(admission(RETRIED, { budget: RETRY_BUDGET, width: 2 })), 'admit');
        assert.deepEqual(first.hold, tokens(1200), 'hold');
        // The retry arrives later, on a full tenant and a full period: it is not counted again.
        const again = await handle.admit(admission(RETRIED, { budget: RETRY_BUDGET, width: 2, atMs: JAN_MS + 5000 }));
        assert.deepEqual(again, first, 'the retried admission');
        assert.equal(await handle.running(), 1, 'running');
        assert.deepEqual(await handle.reservations(100), [{ run: RETRIED, period: '2026-01', remaining: tokens(1200) }]);
        const record = await handle.getRun(RETRIED);
        assert.equal(record?.admittedAtMs, JAN_MS, 'admittedAtMs stays the first');
        assert.equal(record?.lastEpoch, 1, 'lastEpoch');
      },
    },
    {
      id: 'L13.1',
      title: 'a retry that differs in budget, width, agent or chain is a CONFLICT naming the fields and changes nothing',
      async run(context) {
        const handle = acme(context);
        const before = await snapshotTenant(handle, { runs: [RETRIED], periods: ['2026-01'] });
        const differs = async (overrides: Partial<AdmitRequest>, fields: string[]) => {
          await assert.rejects(
            () => handle.admit(admission(RETRIED, { budget: RETRY_BUDGET, width: 2, atMs: JAN_MS + 6000, ...overrides })),
            (error: unknown) => {
              assert.equal((error as { code?: unknown }).code, 'CONFLICT', `code for ${fields.join(', ')}`);
              assert.deepEqual((error as { details?: { fields?: unknown } }).details?.fields, fields, 'details.fields');
              for (const field of fields) assert.ok((error as Error).message.includes(field), `message names ${field}`);
              return true;
            },
          );
        };
        await differs({ budget: { maxTokens: 2000, maxCallTokens: 100 } }, ['budget.maxTokens']);
        await differs({ width: 3 }, ['width']);
        await differs({ agent: { name: 'other', digest: '00'.repeat(32) } }, ['agent.name', 'agent.digest']);
        await differs({ chain: ['user:mallory'] }, ['chain']);
        await differs({ budget: { maxTokens: 1000 }, width: 0 }, ['budget.maxCallTokens', 'width']);
        assert.deepEqual(await snapshotTenant(handle, { runs: [RETRIED], periods: ['2026-01'] }), before, 'nothing changed');
      },
    },
    {
      id: 'L13.2',
      title: 'an identical retry after the lease lapsed is a CONFLICT saying the lease lapsed',
      async run(context) {
        const handle = acme(context);
        await assert.rejects(
          () => handle.admit(admission(RETRIED, { budget: RETRY_BUDGET, width: 2, atMs: JAN_MS + LEASE_MS })),
          (error: unknown) => {
            assert.equal((error as { code?: unknown }).code, 'CONFLICT');
            assert.match((error as Error).message, /lease .*lapsed/);
            // The instant as a person reads it (ISO 8601 UTC), not as raw milliseconds.
            assert.ok(
              (error as Error).message.includes(`lapsed at ${instant(JAN_MS + LEASE_MS)}`),
              `the message gives the lapse instant in UTC: ${(error as Error).message}`,
            );
            return true;
          },
        );
      },
    },
    {
      id: 'L14',
      title: 'admitting a concluded run is a CONFLICT and changes nothing',
      async run(context) {
        const handle = acme(context);
        await handle.settlePass({ run: RETRIED, epoch: 1, spend: tokens(10), concludes: true, atMs: JAN_MS + 10_000 });
        assert.equal((await handle.getRun(RETRIED))?.status, 'concluded', 'status');
        await assertRejectsWith(
          () => handle.admit(admission(RETRIED, { budget: RETRY_BUDGET, width: 2, atMs: JAN_MS + 20_000 })),
          'CONFLICT',
          'admit of a concluded run',
        );
        assert.equal(await handle.running(), 0, 'running');
        assert.deepEqual(await handle.reservations(100), [], 'reservations');
        assert.deepEqual(await handle.spent('2026-01'), tokens(10), 'spent');
      },
    },
  ],
};

const STRANDED = runId(140);
const SUCCESSOR = runId(141);

/**
 * L14.1–L14.2: retries are answered from the books (docs/design/decisions.md "Retries are answered
 * from the books"). With ceiling 1, A's lease lapses, the sweep frees its slot, B is admitted, and
 * A's admission is resent with the same run id: it is a CONFLICT saying A was stranded, and B keeps
 * the only slot. A retry of a run whose first pass settled is a CONFLICT saying to resume it.
 */
export const admitRetryFromBooks: ConformanceGroup = {
  title: 'a retried admission is answered from the books',
  steps: [
    {
      id: 'L14.1',
      title: 'a retry of a run the sweep stranded is a CONFLICT and the run holding the slot keeps it',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 100_000 });
        const request = admission(STRANDED, { budget: RETRY_BUDGET, width: 1 });
        const first = assertOk(await handle.admit(request), 'admit A');
        const lapseMs = first.leaseExpiresAtMs;
        assert.deepEqual(await handle.lapsedRuns({ atMs: lapseMs, limit: 10 }), [STRANDED], 'A lapsed');
        await handle.sweepRun({ run: STRANDED, atMs: lapseMs + 1 });
        assertOk(await handle.admit(admission(SUCCESSOR, { budget: RETRY_BUDGET, width: 1, atMs: lapseMs + 2 })), 'admit B');
        const before = await snapshotTenant(handle, { runs: [STRANDED, SUCCESSOR], periods: ['2026-01'] });
        await assert.rejects(
          () => handle.admit({ ...request, atMs: lapseMs + 3 }),
          (error: unknown) => {
            assert.equal((error as { code?: unknown }).code, 'CONFLICT', 'code');
            assert.match((error as Error).message, /stranded/, 'says what became of the run');
            assert.equal((error as { details?: { status?: unknown } }).details?.status, 'stranded', 'details.status');
            return true;
          },
          'the resent admission of A',
        );
        assert.deepEqual(await snapshotTenant(handle, { runs: [STRANDED, SUCCESSOR], periods: ['2026-01'] }), before, 'nothing changed');
        assert.deepEqual(await handle.runningRuns(10), [SUCCESSOR], 'B holds the only slot');
      },
    },
    {
      id: 'L14.2',
      title: 'a retry of a run whose first pass settled is a CONFLICT saying to resume it',
      async run(context) {
        const handle = acme(context);
        await handle.settlePass({ run: SUCCESSOR, epoch: 1, spend: tokens(5), concludes: false, atMs: JAN_MS + LEASE_MS + 10 });
        await assert.rejects(
          () => handle.admit(admission(SUCCESSOR, { budget: RETRY_BUDGET, width: 1, atMs: JAN_MS + LEASE_MS + 20 })),
          (error: unknown) => {
            assert.equal((error as { code?: unknown }).code, 'CONFLICT', 'code');
            assert.match((error as Error).message, /paused.*resume/, 'says the run paused and to resume it');
            return true;
          },
        );
      },
    },
  ],
};
