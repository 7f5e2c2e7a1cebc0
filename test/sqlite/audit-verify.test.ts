import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { ALICE, BOB, T0, tempDir } from '../plane/plane-fixtures.js';

// Tampering with the audit log behind the store's back, on the SQLite file itself, and finding it.

describe('plane.verifyAudit recomputes every hash chain', () => {
  let dir: { dir: string; remove: () => void };
  let path: string;
  let store: QuotaStore;
  let plane: Plane;

  beforeEach(async () => {
    dir = tempDir();
    path = join(dir.dir, 'quota.db');
    store = await openStore(`sqlite:${path}`);
    plane = createPlane({ store, clock: new ManualClock(T0) });
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 4 }, { by: ALICE, newTenant: true });
    await plane.halt({ tenant: 'acme', scope: 'agent:payments-clerk', reason: 'agent 12 loops', by: BOB });
    await plane.lift({ tenant: 'acme', scope: 'agent:payments-clerk', by: ALICE });
    await plane.halt({ tenant: 'globex', scope: 'tenant', reason: 'incident 7', by: BOB, newTenant: true });
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  function tamper(sql: string, ...params: unknown[]): void {
    const raw = new Database(path);
    raw.prepare(sql).run(...params);
    raw.close();
  }

  it('an untouched log verifies for every tenant', async () => {
    expect(await plane.verifyAudit()).toEqual({
      ok: true,
      tenants: [
        { tenant: 'acme', rows: 3, ok: true, firstMismatch: null },
        { tenant: 'globex', rows: 1, ok: true, firstMismatch: null },
      ],
    });
  });

  it('verifies a chain longer than one page, and finds an edit on a later page', async () => {
    const handle = store.tenant('paged');
    for (let index = 0; index < 1100; index += 1) {
      await handle.appendAudit({ atMs: T0 + index, by: ALICE, action: 'note', subject: `row-${index}`, detail: { index } });
    }
    expect((await plane.verifyAudit({ tenant: 'paged' })).tenants[0]).toEqual({ tenant: 'paged', rows: 1100, ok: true, firstMismatch: null });
    tamper("UPDATE quota_audit SET subject = 'edited' WHERE tenant = 'paged' AND seq = 1050");
    expect((await plane.verifyAudit({ tenant: 'paged' })).tenants[0]).toMatchObject({ rows: 1049, firstMismatch: { seq: 1050, problem: 'hash' } });
  });

  it('a row whose content was edited is named by its sequence number', async () => {
    tamper("UPDATE quota_audit SET detail_json = ? WHERE tenant = 'acme' AND seq = 2", '{"reason":"nothing to see","replaced":null}');
    const verification = await plane.verifyAudit();
    expect(verification.ok).toBe(false);
    expect(verification.tenants[0]).toEqual({
      tenant: 'acme',
      rows: 1,
      ok: false,
      firstMismatch: {
        seq: 2,
        problem: 'hash',
        message: expect.stringContaining("audit row 2 of tenant 'acme' (halt agent:payments-clerk) does not match its hash"),
      },
    });
    expect(verification.tenants[1]).toMatchObject({ tenant: 'globex', ok: true });
  });

  it('a row re-hashed to cover an edit breaks the row after it', async () => {
    tamper("UPDATE quota_audit SET actor = 'mallory', hash = ? WHERE tenant = 'acme' AND seq = 2", 'f'.repeat(64));
    expect((await plane.verifyAudit({ tenant: 'acme' })).tenants[0]?.firstMismatch).toMatchObject({ seq: 2, problem: 'hash' });
  });

  it('a deleted row is named as missing from the sequence', async () => {
    tamper("DELETE FROM quota_audit WHERE tenant = 'acme' AND seq = 2");
    expect((await plane.verifyAudit({ tenant: 'acme' })).tenants[0]?.firstMismatch).toMatchObject({
      seq: 2,
      problem: 'sequence',
      message: "audit row 2 of tenant 'acme' is missing (the next row is 3): rows were deleted",
    });
  });

  it('a row that no longer decodes is named as unreadable', async () => {
    tamper("UPDATE quota_audit SET detail_json = 'not json' WHERE tenant = 'acme' AND seq = 3");
    expect((await plane.verifyAudit({ tenant: 'acme' })).tenants[0]).toMatchObject({
      rows: 2,
      ok: false,
      firstMismatch: { seq: 3, problem: 'unreadable' },
    });
  });

  it("L95.5: a deleted tenant's chain is still walked when every chain is verified, and an edit to it is found", async () => {
    await plane.deleteTenant({ tenant: 'globex', by: ALICE, reason: 'customer left' });
    expect(await plane.tenants()).toEqual(['acme']);
    expect((await plane.verifyAudit()).tenants).toEqual([
      { tenant: 'acme', rows: 3, ok: true, firstMismatch: null },
      { tenant: 'globex', rows: 2, ok: true, firstMismatch: null },
    ]);
    tamper("UPDATE quota_audit SET subject = 'edited' WHERE tenant = 'globex' AND seq = 1");
    expect(await plane.verifyAudit()).toMatchObject({ ok: false, tenants: [{ tenant: 'acme', ok: true }, { tenant: 'globex', ok: false, firstMismatch: { seq: 1, problem: 'hash' } }] });
  });
});
