import assert from 'node:assert/strict';

import { AUDIT_GENESIS_HASH, auditRowHash } from '../../store/audit-hash.js';
import type { AuditRecord } from '../../store/types.js';
import { assertOk, assertRejectsWith } from './assertions.js';
import { ACME, admission, auditEntry, configure, GLOBEX, JAN_MS, LEASE_MS, OPS_ALICE, OPS_CAROL, runId, tokens } from './fixtures.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// The operator listings and acts of the port (store.ts `runs`, `unsettledPasses`, `idleHolds`,
// `releaseRun`, `settlePass` with `by`, `auditChain`; docs/design/rules.md#l56–#l64).

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

const BUDGET = { maxTokens: 1000, maxCallTokens: 100 };
const P = runId(800);
const Q = runId(801);
const S = runId(802);
const Z = runId(803);
const C = runId(804);

/** L56–L59: the registry, unsettled passes and idle holds, as an operator reads them. */
export const operatorListings: ConformanceGroup = {
  title: 'operator listings read the registry, unsettled passes and idle holds',
  steps: [
    {
      id: 'L56',
      title: 'runs() pages the registry by run id, filters by status and reports slot, status instant and lease',
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxTokensPerPeriod: 100_000 });
        assertOk(await handle.admit(admission(P, { budget: BUDGET })), 'admit P');
        assertOk(await handle.admit(admission(Q, { budget: BUDGET, atMs: JAN_MS + 10 })), 'admit Q');
        assertOk(await handle.admit(admission(S, { budget: BUDGET, atMs: JAN_MS + 20, leaseMs: 5000 })), 'admit S');
        assertOk(await handle.admit(admission(Z, { budget: { maxTokens: 0, maxCallTokens: 0 } })), 'admit Z');
        assertOk(await handle.admit(admission(C, { budget: BUDGET })), 'admit C');
        await handle.settlePass({ run: P, epoch: 1, spend: tokens(100), concludes: false, atMs: JAN_MS + 1000 });
        await handle.settlePass({ run: Z, epoch: 1, spend: tokens(0), concludes: false, atMs: JAN_MS + 1000 });
        await handle.settlePass({ run: C, epoch: 1, spend: tokens(0), concludes: true, atMs: JAN_MS + 1000 });

        const all = await handle.runs({ limit: 100 });
        assert.deepEqual(all.map((row) => [row.run, row.status]), [
          [P, 'paused'],
          [Q, 'running'],
          [S, 'running'],
          [Z, 'paused'],
          [C, 'concluded'],
        ], 'every run, by id');
        const q = all[1];
        assert.deepEqual(
          q,
          {
            run: Q,
            status: 'running',
            agent: null,
            chain: null,
            admittedAtMs: JAN_MS + 10,
            lastEpoch: 1,
            statusSinceMs: JAN_MS + 10,
            holdsSlot: true,
            leaseExpiresAtMs: JAN_MS + 10 + LEASE_MS,
          },
          'the summary of Q',
        );
        assert.equal(all[0]?.statusSinceMs, JAN_MS + 1000, 'P paused since its settle');
        assert.equal(all[0]?.holdsSlot, false, 'P gave its slot back');
        assert.deepEqual((await handle.runs({ limit: 2 })).map((row) => row.run), [P, Q], 'limit 2');
        assert.deepEqual((await handle.runs({ after: Q, limit: 2 })).map((row) => row.run), [S, Z], 'after Q');
        assert.deepEqual(
          (await handle.runs({ statuses: ['paused', 'concluded'], limit: 100 })).map((row) => row.run),
          [P, Z, C],
          'paused and concluded',
        );
        assert.deepEqual(await handle.runs({ statuses: ['stranded'], limit: 100 }), [], 'stranded');
        await assertRejectsWith(() => handle.runs({ statuses: ['lost' as never], limit: 1 }), 'INVALID_ARGUMENT', 'an unknown status');
      },
    },
    {
      id: 'L57',
      title: 'unsettledPasses lists lapsed passes never settled, oldest run first, not live ones nor settled ones',
      async run(context) {
        const handle = acme(context);
        assert.deepEqual(await handle.unsettledPasses({ atMs: JAN_MS + 20 + 4999, limit: 10 }), [], 'before S lapses');
        const lapsed = await handle.unsettledPasses({ atMs: JAN_MS + 20 + 5000, limit: 10 });
        assert.deepEqual(
          lapsed,
          [{ run: S, epoch: 1, period: '2026-01', takesSlot: true, startedAtMs: JAN_MS + 20, leaseExpiresAtMs: JAN_MS + 5020, settledAtMs: null }],
          'S lapsed at its expiry',
        );
        const later = await handle.unsettledPasses({ atMs: JAN_MS + 10 + LEASE_MS, limit: 10 });
        assert.deepEqual(later.map((pass) => [pass.run, pass.epoch]), [[Q, 1], [S, 1]], 'Q lapsed too');
        assert.deepEqual((await handle.unsettledPasses({ atMs: JAN_MS + 10 + LEASE_MS, limit: 1 })).length, 1, 'limit 1');
      },
    },
    {
      id: 'L58',
      title: 'idleHolds lists non-zero holds of runs paused since the cut-off or earlier',
      async run(context) {
        const handle = acme(context);
        assert.deepEqual(await handle.idleHolds({ idleSinceMs: JAN_MS + 999, limit: 10 }), [], 'paused after the cut-off');
        assert.deepEqual(
          await handle.idleHolds({ idleSinceMs: JAN_MS + 1000, limit: 10 }),
          [{ run: P, period: '2026-01', remaining: tokens(900), idleSinceMs: JAN_MS + 1000 }],
          'P (Z holds nothing, Q and S run, C concluded)',
        );
      },
    },
    {
      id: 'L59',
      title: 'a tenant whose only rows are audit rows is listed by tenants()',
      async run(context) {
        await context.store.tenant('audited-only').appendAudit(auditEntry('lift', 'tenant', JAN_MS));
        assert.equal((await context.store.tenants()).includes('audited-only'), true, 'tenants()');
      },
    },
  ],
};

/** L60–L64: an operator's release and settle, each with its audit row; the audit chain read in order. */
export const operatorActs: ConformanceGroup = {
  title: 'operator releases and settles are audited in their own transaction',
  steps: [
    {
      id: 'L60',
      title: "releaseRun gives back a run's slot and hold, closes it and appends the run.release row; with ifStatus only from that status",
      async run(context) {
        const handle = acme(context);
        await configure(handle, { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 100_000 });
        assertOk(await handle.admit(admission(P, { budget: BUDGET })), 'admit P');
        // With ifStatus, a run in another status is CONFLICT and nothing is written.
        await assertRejectsWith(() => handle.releaseRun({ run: P, atMs: JAN_MS + 50, by: OPS_CAROL, ifStatus: 'stranded' }), 'CONFLICT', 'ifStatus stranded');
        assert.equal((await handle.getRun(P))?.status, 'running', 'still running after the guarded release');
        const outcome = await handle.releaseRun({ run: P, atMs: JAN_MS + 100, by: OPS_CAROL, ifStatus: 'running' });
        assert.equal(outcome.outcome, 'released', 'outcome');
        assert.equal(outcome.previousStatus, 'running', 'previousStatus');
        assert.equal(outcome.slotReleased, true, 'slotReleased');
        assert.deepEqual(outcome.holdReleased, { run: P, period: '2026-01', remaining: tokens(1000) }, 'holdReleased');
        assert.deepEqual(
          outcome.audit === null ? null : { ...outcome.audit, hash: 'x' },
          {
            seq: 2,
            atMs: JAN_MS + 100,
            by: OPS_CAROL,
            action: 'run.release',
            subject: P,
            detail: { previousStatus: 'running', slot: true, hold: { period: '2026-01', tokens: 1000, minorUnits: 0 } },
            hash: 'x',
          },
          'the audit row',
        );
        assert.deepEqual((await handle.auditLog({ limit: 1 }))[0], outcome.audit, 'auditLog shows the same row');
        assert.deepEqual(await handle.runningRuns(10), [], 'runningRuns');
        assert.deepEqual(await handle.reservations(10), [], 'reservations');
        assert.equal((await handle.getRun(P))?.status, 'released', 'status');
        assertOk(await handle.admit(admission(Q, { budget: BUDGET })), 'the slot admits the next run');
      },
    },
    {
      id: 'L61',
      title: 'a released run takes no pass, beat or admission, a second release writes nothing, and an unknown run is NOT_FOUND',
      async run(context) {
        const handle = acme(context);
        await assertRejectsWith(() => handle.resume({ run: P, atMs: JAN_MS + 200, leaseMs: LEASE_MS }), 'CONFLICT', 'resume');
        await assertRejectsWith(() => handle.heartbeat({ run: P, epoch: 1, atMs: JAN_MS + 200, leaseMs: LEASE_MS }), 'CONFLICT', 'heartbeat');
        await assertRejectsWith(() => handle.admit(admission(P, { budget: BUDGET })), 'CONFLICT', 'admission retry');
        const again = await handle.releaseRun({ run: P, atMs: JAN_MS + 300, by: OPS_ALICE });
        assert.deepEqual(
          again,
          { outcome: 'already-closed', run: P, previousStatus: 'released', slotReleased: false, holdReleased: null, audit: null },
          'a second release',
        );
        assert.equal((await handle.auditLog({ limit: 10 })).length, 2, 'no audit row for it');
        await assertRejectsWith(() => handle.releaseRun({ run: runId(899), atMs: JAN_MS, by: OPS_ALICE }), 'NOT_FOUND', 'unknown run');
      },
    },
    {
      id: 'L62',
      title: "a late settle of a released run's pass still books its spend, and the run stays released",
      async run(context) {
        const handle = acme(context);
        const settled = await handle.settlePass({ run: P, epoch: 1, spend: tokens(40), concludes: true, atMs: JAN_MS + 400 });
        assert.equal(settled.outcome, 'settled', 'outcome');
        assert.deepEqual(await handle.spent('2026-01'), tokens(40), 'spent');
        assert.equal((await handle.getRun(P))?.status, 'released', 'status');
        assert.deepEqual(await handle.runningRuns(10), [Q], 'the other run keeps its slot');
      },
    },
    {
      id: 'L63',
      title: 'settlePass with by appends one run.settle row when it writes the receipt, none on a retry',
      async run(context) {
        const handle = acme(context);
        const request = { run: Q, epoch: 1, spend: { tokens: 70, minorUnits: 5 }, concludes: false, atMs: JAN_MS + 500, by: OPS_ALICE };
        assert.equal((await handle.settlePass(request)).outcome, 'settled', 'first');
        assert.equal((await handle.settlePass({ ...request, atMs: JAN_MS + 600 })).outcome, 'already-settled', 'retry');
        const rows = await handle.auditLog({ limit: 10, action: 'run.settle' });
        assert.equal(rows.length, 1, 'one run.settle row');
        assert.deepEqual(
          rows.map(({ atMs, by, subject, detail }) => ({ atMs, by, subject, detail })),
          [
            {
              atMs: JAN_MS + 500,
              by: OPS_ALICE,
              subject: Q,
              detail: { epoch: 1, period: '2026-01', spend: { tokens: 70, minorUnits: 5 }, releaseSlot: true, concludes: false },
            },
          ],
          'the row',
        );
        await handle.settlePass({ run: Q, epoch: 1, spend: { tokens: 70, minorUnits: 5 }, concludes: false, atMs: JAN_MS + 700 });
        assert.equal((await handle.auditLog({ limit: 10, action: 'run.settle' })).length, 1, 'a runner settle appends nothing');
      },
    },
    {
      id: 'L64',
      title: 'auditChain reads the rows after a sequence number in ascending order, hashes verifiable',
      async run(context) {
        const handle = acme(context);
        const chain = await handle.auditChain({ afterSeq: 0, limit: 100 });
        assert.deepEqual(chain.map((row) => row.seq), [1, 2, 3], 'every row');
        assert.deepEqual(chain, [...(await handle.auditLog({ limit: 100 }))].reverse(), 'the same rows as auditLog');
        assert.deepEqual((await handle.auditChain({ afterSeq: 1, limit: 1 })).map((row) => row.seq), [2], 'after 1, limit 1');
        assert.deepEqual(await handle.auditChain({ afterSeq: 3, limit: 10 }), [], 'after the last');
        let previous = AUDIT_GENESIS_HASH;
        for (const row of chain as AuditRecord[]) {
          const entry = { atMs: row.atMs, by: row.by, action: row.action, subject: row.subject, detail: row.detail };
          assert.equal(row.hash, auditRowHash(ACME, row.seq, entry, previous), `hash of row ${row.seq}`);
          previous = row.hash;
        }
        assert.deepEqual(await context.store.tenant(GLOBEX).auditChain({ afterSeq: 0, limit: 10 }), [], 'another tenant');
      },
    },
  ],
};
