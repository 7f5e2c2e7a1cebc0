import assert from 'node:assert/strict';

import { EVERY_TENANT, PLANE_AUDIT_TENANT } from '../../core/identifiers.js';
import type { TenantQuota } from '../../core/quota.js';
import { AUDIT_GENESIS_HASH, auditRowHash } from '../../store/audit-hash.js';
import { storeHasTenant } from '../../store/known-tenants.js';
import type { AuditEntry, AuditRecord } from '../../store/types.js';
import { assertOk } from './assertions.js';
import { ACME, admission, auditEntry, configure, GLOBEX, JAN_MS, OPS_ALICE, OPS_CAROL, runId } from './fixtures.js';
import type { ConformanceContext, ConformanceGroup } from './types.js';

// Tenant configuration (getQuota/setQuota), the audit log, and the tenant listing of store.ts.

const acme = (context: ConformanceContext) => context.store.tenant(ACME);

// JSON drops members that are undefined, so a quota read back compares by content, not by how
// the adapter spells "absent".
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

const entryOf = (record: AuditRecord): AuditEntry => ({
  atMs: record.atMs,
  by: record.by,
  action: record.action,
  subject: record.subject,
  detail: record.detail,
});

const FIRST_QUOTA: TenantQuota = {
  period: 'daily',
  maxConcurrentRuns: 4,
  maxTokensPerPeriod: 1_000_000,
  maxMinorUnitsPerPeriod: 25_000_000,
  rateCeilings: { 'tool://payments/refund': [{ count: 20, windowSeconds: 3600 }, { count: 2, windowSeconds: 1 }] },
};
const SECOND_QUOTA: TenantQuota = { period: 'monthly', maxConcurrentRuns: 0 };

/** L28–L32: the stored quota, and the append-only, hash-chained audit log. */
export const quotaAndAudit: ConformanceGroup = {
  title: 'the stored quota and the audit log',
  steps: [
    {
      id: 'L28',
      title: 'getQuota is null before any setQuota, and the audit log is empty',
      async run(context) {
        const handle = acme(context);
        assert.equal(await handle.getQuota(), null, 'getQuota');
        assert.deepEqual(await handle.auditLog({ limit: 10 }), [], 'auditLog');
      },
    },
    {
      id: 'L29',
      title: 'setQuota replaces the whole quota and appends its audit row',
      async run(context) {
        const handle = acme(context);
        const firstAudit = auditEntry('quota.set', 'quota', JAN_MS, { quota: FIRST_QUOTA });
        await handle.setQuota(FIRST_QUOTA, firstAudit);
        assert.deepEqual(plain(await handle.getQuota()), plain(FIRST_QUOTA), 'getQuota after the first set');
        const secondAudit: AuditEntry = { ...firstAudit, atMs: JAN_MS + 1000, by: OPS_CAROL, detail: { quota: SECOND_QUOTA } };
        await handle.setQuota(SECOND_QUOTA, secondAudit);
        assert.deepEqual(plain(await handle.getQuota()), plain(SECOND_QUOTA), 'getQuota after the second set');
        const log = await handle.auditLog({ limit: 10 });
        assert.deepEqual(log.map((record) => record.seq), [2, 1], 'audit rows, newest first');
        assert.deepEqual(log.map(entryOf), [secondAudit, firstAudit].map((entry) => plain(entry)), 'audit rows');
      },
    },
    {
      id: 'L30',
      title: 'appended rows are numbered on, listed newest first, cut at the limit and filtered by action',
      async run(context) {
        const handle = acme(context);
        const entries = [
          auditEntry('halt', 'tenant', JAN_MS + 2000, { reason: 'incident 42', nested: { b: 2, a: [1, 'x'] } }),
          auditEntry('lift', 'tenant', JAN_MS + 3000, { standing: { reason: 'incident 42' } }),
          auditEntry('halt', 'agent:payments-clerk', JAN_MS + 4000, { reason: 'agent 12 is looping' }),
        ];
        const appended: AuditRecord[] = [];
        for (const entry of entries) appended.push(await handle.appendAudit(entry));
        assert.deepEqual(appended.map((record) => record.seq), [3, 4, 5], 'seq of the appended rows');
        assert.deepEqual(appended.map(entryOf), entries, 'the appended rows carry their entries');
        const log = await handle.auditLog({ limit: 10 });
        assert.deepEqual(log.map((record) => record.seq), [5, 4, 3, 2, 1], 'auditLog, newest first');
        assert.deepEqual(log.slice(0, 3), [...appended].reverse(), 'auditLog returns the rows appendAudit returned');
        assert.deepEqual((await handle.auditLog({ limit: 2 })).map((record) => record.seq), [5, 4], 'limit 2');
        assert.deepEqual(
          (await handle.auditLog({ limit: 10, action: 'halt' })).map((record) => record.seq),
          [5, 3],
          'action halt',
        );
        assert.deepEqual(
          (await handle.auditLog({ limit: 1, action: 'quota.set' })).map((record) => record.seq),
          [2],
          'action quota.set, limit 1',
        );
      },
    },
    {
      id: 'L31',
      title: "each row's hash chains to the row before it",
      async run(context) {
        const log = [...(await acme(context).auditLog({ limit: 10 }))].reverse();
        let previous = AUDIT_GENESIS_HASH;
        for (const record of log) {
          assert.match(record.hash, /^[0-9a-f]{64}$/, `hash of row ${record.seq}`);
          assert.equal(record.hash, auditRowHash(ACME, record.seq, entryOf(record), previous), `hash of row ${record.seq}`);
          previous = record.hash;
        }
      },
    },
    {
      id: 'L32',
      title: "another tenant's log is numbered and chained on its own",
      async run(context) {
        const globex = context.store.tenant(GLOBEX);
        const entry = auditEntry('halt', 'tenant', JAN_MS, { reason: 'globex incident' });
        const record = await globex.appendAudit(entry);
        assert.equal(record.seq, 1, 'seq');
        assert.equal(record.hash, auditRowHash(GLOBEX, 1, entry, AUDIT_GENESIS_HASH), 'hash');
        assert.deepEqual(await globex.auditLog({ limit: 10 }), [record], "globex's log");
        assert.equal((await acme(context).auditLog({ limit: 10 })).length, 5, "acme's log");
      },
    },
  ],
};

/** L33, L95: the tenant listing, and which tenants exist. */
export const tenantListing: ConformanceGroup = {
  title: 'tenants() lists the tenants that have something stored, and hasTenant agrees',
  steps: [
    {
      id: 'L33',
      title: 'tenants with a quota, a run or a halt are listed once each, in byte order',
      async run(context) {
        const { store } = context;
        assert.deepEqual(await store.tenants(), [], 'a fresh store');
        await store.tenant('idle').running();
        await store
          .tenant(GLOBEX)
          .setQuota({ period: 'monthly' }, auditEntry('quota.set', 'quota', JAN_MS, { quota: { period: 'monthly' } }));
        assertOk(await store.tenant(ACME).admit(admission(runId(1))), 'admit in acme');
        const halt = { scope: { kind: 'tenant' }, reason: 'incident 42', by: OPS_ALICE, atMs: JAN_MS } as const;
        await store.tenant('Zeta').setHalt(halt);
        await store.tenant(ACME).setHalt(halt);
        // Byte order puts upper case before lower case.
        assert.deepEqual(await store.tenants(), ['Zeta', ACME, GLOBEX]);
      },
    },
    {
      id: 'L95',
      title:
        'a tenant exists iff the store holds a record of it (a quota, a run, a slot, a waiter, a halt, an audit row, a key of its own); ' +
        'hasTenant answers as tenants() lists, and reads create none',
      async run(context) {
        const { store } = context;
        const known = (tenant: string) => storeHasTenant(store, tenant);
        const before = await store.tenants();

        // Reads of a tenant nobody used leave it unknown.
        const ghost = store.tenant('ghost');
        await ghost.getQuota();
        await ghost.halts();
        await ghost.auditLog({ limit: 10 });
        await ghost.running();
        await ghost.runs({ limit: 10 });
        await ghost.reservations(10);
        assert.equal(await known('ghost'), false, 'a tenant only read is unknown');

        // One record of one kind is enough.
        const halt = { scope: { kind: 'tenant' }, reason: 'incident 43', by: OPS_ALICE, atMs: JAN_MS } as const;
        await store.tenant('by-halt').setHalt(halt);
        await store.tenant('by-audit').appendAudit(auditEntry('lift', 'tenant', JAN_MS, { reason: 'before this store' }));
        await configure(store.tenant('by-quota'), { period: 'monthly' });
        assertOk(await store.tenant('by-run').admit(admission(runId(2))), 'admit in by-run');
        const made = ['by-audit', 'by-halt', 'by-quota', 'by-run'];

        const keys = store.apiKeys?.();
        if (keys !== undefined) {
          const key = (n: number, tenant: string) => ({
            id: `key_01JQ0000000000000000000KY${n}`,
            name: `key-${n}`,
            role: 'operator' as const,
            tenant,
            createdAtMs: JAN_MS,
            hash: String(n).repeat(64),
          });
          await keys.create(key(1, 'by-key'));
          await keys.create(key(2, EVERY_TENANT));
          made.push('by-key');
        }

        // A waiter is the only record of a tenant whose first admission waits for a plane slot.
        if (store.setPlaneCeiling !== undefined && store.planeUsage !== undefined) {
          const { running } = await store.planeUsage([]);
          const plane = { maxConcurrentRuns: running };
          await store.setPlaneCeiling(plane, auditEntry('plane.set', 'plane', JAN_MS, { new: plane }), PLANE_AUDIT_TENANT);
          const waiting = await store.tenant('by-waiter').admitOrWait(admission(runId(3)), { untilMs: JAN_MS + 60_000, leaseMs: 60_000 });
          assert.ok(!waiting.ok && 'waiting' in waiting, `by-waiter waits, got ${JSON.stringify(waiting)}`);
          made.push('by-waiter', PLANE_AUDIT_TENANT);
        }

        const listed = await store.tenants();
        assert.deepEqual(listed, [...before, ...made].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)), 'tenants() lists every tenant with a record, once');
        assert.ok(!listed.includes(EVERY_TENANT), "a key of every tenant ('*') makes no tenant");
        for (const tenant of listed) assert.equal(await known(tenant), true, `hasTenant('${tenant}') as listed`);
        assert.equal(await known('ghost'), false, 'ghost stays unknown');
        assert.equal(await known('by-hal'), false, 'a name near a known one is not known');

        // A tenant whose only record goes is unknown again: the rule is "iff".
        assert.equal(await store.tenant('by-halt').liftHaltIf({ ...halt, scope: { kind: 'tenant' } }), true, 'the halt-only tenant loses its halt');
        assert.equal(await known('by-halt'), false, 'with no record left, by-halt is unknown');
        assert.ok(!(await store.tenants()).includes('by-halt'), 'and no longer listed');
      },
    },
  ],
};
