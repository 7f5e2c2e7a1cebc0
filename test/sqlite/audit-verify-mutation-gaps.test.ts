import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { ALICE, T0, tempDir } from '../plane/plane-fixtures.js';

// verifyAudit names the first bad row of a chain by its sequence number, whether it was deleted or
// can no longer be read, and whichever comes first when both happened.

describe('plane.verifyAudit: unreadable and missing rows, each with its sequence number', () => {
  let dir: { dir: string; remove: () => void };
  let path: string;
  let store: QuotaStore;
  let plane: Plane;

  beforeEach(async () => {
    dir = tempDir();
    path = join(dir.dir, 'quota.db');
    store = await openStore(`sqlite:${path}`);
    plane = createPlane({ store, clock: new ManualClock(T0) });
    const handle = store.tenant('acme');
    for (let index = 1; index <= 8; index += 1) {
      await handle.appendAudit({ atMs: T0 + index, by: ALICE, action: 'note', subject: `row-${index}`, detail: { index } });
    }
  });
  afterEach(async () => {
    await store.close();
    dir.remove();
  });

  function tamper(sql: string): void {
    const raw = new Database(path);
    raw.prepare(sql).run();
    raw.close();
  }

  it('an unreadable row is named with its number, and the rows before it are counted as verified', async () => {
    tamper("UPDATE quota_audit SET detail_json = 'not json' WHERE tenant = 'acme' AND seq = 6");
    expect((await plane.verifyAudit({ tenant: 'acme' })).tenants[0]).toEqual({
      tenant: 'acme',
      rows: 5,
      ok: false,
      firstMismatch: { seq: 6, problem: 'unreadable', message: expect.stringMatching(/^audit row 6 of tenant 'acme' cannot be read: /) },
    });
  });

  it('an unreadable first row is row 1, with nothing verified', async () => {
    tamper("UPDATE quota_audit SET detail_json = 'not json' WHERE tenant = 'acme' AND seq = 1");
    expect((await plane.verifyAudit({ tenant: 'acme' })).tenants[0]).toMatchObject({ rows: 0, ok: false, firstMismatch: { seq: 1, problem: 'unreadable' } });
  });

  it('a missing row is named with its number and the number that follows', async () => {
    tamper("DELETE FROM quota_audit WHERE tenant = 'acme' AND seq IN (4, 5)");
    expect((await plane.verifyAudit({ tenant: 'acme' })).tenants[0]).toEqual({
      tenant: 'acme',
      rows: 3,
      ok: false,
      firstMismatch: { seq: 4, problem: 'sequence', message: "audit row 4 of tenant 'acme' is missing (the next row is 6): rows were deleted" },
    });
  });

  it('a missing row before an unreadable one is reported, not thrown', async () => {
    tamper("DELETE FROM quota_audit WHERE tenant = 'acme' AND seq = 3");
    tamper("UPDATE quota_audit SET detail_json = 'not json' WHERE tenant = 'acme' AND seq = 6");
    expect((await plane.verifyAudit({ tenant: 'acme' })).tenants[0]).toEqual({
      tenant: 'acme',
      rows: 2,
      ok: false,
      firstMismatch: { seq: 3, problem: 'sequence', message: "audit row 3 of tenant 'acme' is missing (the next row is 4): rows were deleted" },
    });
  });

  it('rows missing right before an unreadable one are reported as missing from the first gap', async () => {
    tamper("DELETE FROM quota_audit WHERE tenant = 'acme' AND seq IN (4, 5)");
    tamper("UPDATE quota_audit SET detail_json = 'not json' WHERE tenant = 'acme' AND seq = 6");
    expect((await plane.verifyAudit({ tenant: 'acme' })).tenants[0]).toEqual({
      tenant: 'acme',
      rows: 3,
      ok: false,
      firstMismatch: { seq: 4, problem: 'sequence', message: "audit row 4 of tenant 'acme' is missing (the next row is 6): rows were deleted" },
    });
  });

  it('an unreadable row after an edited one: the edit comes first', async () => {
    tamper("UPDATE quota_audit SET subject = 'edited' WHERE tenant = 'acme' AND seq = 2");
    tamper("UPDATE quota_audit SET detail_json = 'not json' WHERE tenant = 'acme' AND seq = 6");
    expect((await plane.verifyAudit({ tenant: 'acme' })).tenants[0]).toMatchObject({ rows: 1, firstMismatch: { seq: 2, problem: 'hash' } });
  });

  it('a tenant with no audit rows verifies with 0 rows', async () => {
    expect(await plane.verifyAudit({ tenant: 'nobody' })).toEqual({
      ok: true,
      tenants: [{ tenant: 'nobody', rows: 0, ok: true, firstMismatch: null }],
    });
  });
});
