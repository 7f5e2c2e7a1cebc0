import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import type { AdmitRequest } from '../../src/store/types.js';
import type { WaitOutcome } from '../../src/store/waiters.js';
import { tempDir } from '../plane/plane-fixtures.js';
import { failure } from '../plane/plane-fixtures.js';

// The SQLite adapter's waiting admissions, the answers themselves: the exact
// waiting answer (`waiting: true`, not merely a `waiting` key), a refused waiter that is still
// halted when it collects, cancels that wake nobody, and a waiter row the store cannot read.

const T0 = 1_767_600_000_000; // 2026-01-05T08:00:00Z
const OPS = { actor: 'ops-alice', basis: 'asserted' as const };
const ZERO = { tokens: 0, minorUnits: 0 };
const TERMS = { untilMs: T0 + 600_000, leaseMs: 10_000 };
const PAUSED = { name: 'paused', digest: 'a1'.repeat(32) };

let dir: { dir: string; remove: () => void };
let path: string;
let store: QuotaStore;
let acme: TenantStore;
let woken: (string | null)[];
beforeEach(async () => {
  dir = tempDir();
  path = join(dir.dir, 'quota.db');
  store = await openStore(`sqlite:${path}`);
  acme = store.tenant('acme');
  woken = [];
  store.waiterWakes?.().subscribe((tenant) => woken.push(tenant));
  await acme.setQuota({ period: 'monthly', maxConcurrentRuns: 1 }, { atMs: T0, by: OPS, action: 'quota.set', subject: 'quota', detail: {} });
  expect((await acme.admit(ask('holder', T0))).ok).toBe(true);
});
afterEach(async () => {
  await store.close();
  dir.remove();
});

function ask(run: string, atMs: number, overrides: Partial<AdmitRequest> = {}): AdmitRequest {
  return { run, budget: {}, width: 0, atMs, leaseMs: 60_000, ...overrides };
}

describe('W1 the waiting answer', () => {
  it('joining the queue answers exactly { ok: false, waiting: true, run, position, enqueuedAtMs }', async () => {
    const answer: WaitOutcome = await acme.admitOrWait(ask('w1', T0 + 1), TERMS);
    expect(answer).toStrictEqual({ ok: false, waiting: true, run: 'w1', position: 1, enqueuedAtMs: T0 + 1 });
    expect(await acme.collectWaiter(ask('w1', T0 + 2), TERMS)).toStrictEqual({ ok: false, waiting: true, run: 'w1', position: 1, enqueuedAtMs: T0 + 1 });
  });

  it('W16 a refused waiter put back in its place answers exactly the waiting shape, with its place and first instant', async () => {
    await acme.admitOrWait(ask('w1', T0 + 1, { agent: PAUSED }), TERMS);
    await acme.admitOrWait(ask('w2', T0 + 2), TERMS);
    await acme.setHalt({ scope: { kind: 'agent', name: 'paused' }, reason: 'incident 11', by: OPS, atMs: T0 + 3 });
    await acme.settlePass({ run: 'holder', epoch: 1, spend: ZERO, concludes: true, atMs: T0 + 4 }); // w1 refused, w2 granted
    await acme.liftHalt({ kind: 'agent', name: 'paused' });
    expect(await acme.collectWaiter(ask('w1', T0 + 5, { agent: PAUSED }), TERMS)).toStrictEqual({
      ok: false,
      waiting: true,
      run: 'w1',
      position: 1,
      enqueuedAtMs: T0 + 1,
    });
  });
});

describe('W9 a refused waiter still halted when it collects', () => {
  it('hears Halted even while the tenant is full, and its place is gone', async () => {
    await acme.admitOrWait(ask('w1', T0 + 1, { agent: PAUSED }), TERMS);
    await acme.admitOrWait(ask('w2', T0 + 2), TERMS);
    await acme.setHalt({ scope: { kind: 'agent', name: 'paused' }, reason: 'incident 12', by: OPS, atMs: T0 + 3 });
    await acme.settlePass({ run: 'holder', epoch: 1, spend: ZERO, concludes: true, atMs: T0 + 4 }); // w1 refused, w2 granted
    expect(await acme.runningRuns(10)).toEqual(['w2']);
    expect(await acme.collectWaiter(ask('w1', T0 + 5, { agent: PAUSED }), TERMS)).toEqual({
      ok: false,
      refusal: { code: 'Halted', tenant: 'acme', scope: 'agent:paused', reason: 'incident 12', by: OPS, haltedAtMs: T0 + 3 },
    });
    expect(await acme.cancelWaiter({ run: 'w1', atMs: T0 + 6 })).toBe('absent');
  });
});

describe('W7 cancels that free nothing wake nobody', () => {
  it('cancelling a waiting place, or a run with no place, grants nothing and wakes no tenant', async () => {
    await acme.admitOrWait(ask('w1', T0 + 1), TERMS);
    woken.length = 0;
    expect(await acme.cancelWaiter({ run: 'w1', atMs: T0 + 2 })).toBe('cancelled');
    expect(await acme.cancelWaiter({ run: 'w1', atMs: T0 + 3 })).toBe('absent');
    expect(woken).toEqual([]);
  });
});

describe('a waiter row the store cannot read', () => {
  it('is STORE_CORRUPT for the settle that would serve it: nothing is decided past a row it cannot read', async () => {
    await acme.admitOrWait(ask('w1', T0 + 1), TERMS);
    const raw = new Database(path);
    raw.prepare("UPDATE quota_waiters SET request_json = '{not json' WHERE tenant = 'acme' AND run_id = 'w1'").run();
    raw.close();
    const error = await failure(acme.settlePass({ run: 'holder', epoch: 1, spend: ZERO, concludes: true, atMs: T0 + 2 }));
    expect(error.code).toBe('STORE_CORRUPT');
    expect(error.message).toMatch(/^tenant 'acme' has an unreadable waiter row \(/);
    // The settle wrote nothing: the holder still runs and w1 still waits.
    expect(await acme.runningRuns(10)).toEqual(['holder']);
    expect((await acme.waitQueue({ atMs: T0 + 2 })).depth).toBe(1);
  });
});
