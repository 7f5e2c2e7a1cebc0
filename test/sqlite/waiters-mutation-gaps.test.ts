import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import type { TenantQuota } from '../../src/core/quota.js';
import type { AdmitRequest } from '../../src/store/types.js';
import type { WaitOutcome, WaitTerms } from '../../src/store/waiters.js';
import { failure } from '../plane/plane-fixtures.js';

// The SQLite adapter's waiting admissions (docs/design/decisions.md "Waiting for a slot"; README
// "Waiting for a slot"), called on the store directly: the boundaries and branches the conformance
// battery's W cases leave open. Every figure below is exact: queue places, the order of grants,
// lease instants, and which tenants a grant wakes.

const T0 = 1_767_600_000_000; // 2026-01-05T08:00:00Z
const LEASE_MS = 60_000;
const WAIT_LEASE_MS = 10_000;
const OPS = { actor: 'ops-alice', basis: 'asserted' as const };
const ZERO = { tokens: 0, minorUnits: 0 };
const TERMS: WaitTerms = { untilMs: T0 + 600_000, leaseMs: WAIT_LEASE_MS };

let store: QuotaStore;
let woken: (string | null)[];
beforeEach(async () => {
  store = await openStore('sqlite::memory:');
  woken = [];
  store.waiterWakes?.().subscribe((tenant) => woken.push(tenant));
});
afterEach(() => store.close());

function ask(run: string, atMs: number, overrides: Partial<AdmitRequest> = {}): AdmitRequest {
  return { run, budget: {}, width: 0, atMs, leaseMs: LEASE_MS, ...overrides };
}

async function configure(handle: TenantStore, quota: TenantQuota): Promise<void> {
  await handle.setQuota(quota, { atMs: T0, by: OPS, action: 'quota.set', subject: 'quota', detail: {} });
}

async function setPlane(plane: Record<string, unknown>, atMs: number): Promise<void> {
  await store.setPlaneCeiling?.(plane, { atMs, by: OPS, action: 'plane.set', subject: 'plane', detail: {} }, 'quotaplane:plane');
}

async function conclude(handle: TenantStore, run: string, atMs: number): Promise<void> {
  await handle.settlePass({ run, epoch: 1, spend: ZERO, concludes: true, atMs });
}

/** `[position, enqueuedAtMs]` of a waiting answer; fails on anything else. */
function place(outcome: WaitOutcome): [number, number] {
  if (outcome.ok || !('waiting' in outcome)) throw new Error(`expected waiting, got ${JSON.stringify(outcome)}`);
  return [outcome.position, outcome.enqueuedAtMs];
}

/** The refusal of an answer that is neither a pass nor waiting. */
function refusalOf(outcome: WaitOutcome) {
  if (outcome.ok || 'waiting' in outcome) throw new Error(`expected a refusal, got ${JSON.stringify(outcome)}`);
  return outcome.refusal;
}

describe('leases of waiting places', () => {
  it('W8 a waiter whose lease ends exactly at the instant a slot frees is removed, and the slot goes to the one behind it', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    expect((await acme.admit(ask('holder', T0))).ok).toBe(true);
    expect(place(await acme.admitOrWait(ask('w1', T0), { untilMs: T0 + 600_000, leaseMs: 1_000 }))).toEqual([1, T0]);
    expect(place(await acme.admitOrWait(ask('w2', T0 + 1), TERMS))).toEqual([2, T0 + 1]);
    await conclude(acme, 'holder', T0 + 1_000);
    expect(await acme.runningRuns(10)).toEqual(['w2']);
    expect(await acme.waitQueue({ atMs: T0 + 1_000 })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 1 });
    expect(await acme.cancelWaiter({ run: 'w1', atMs: T0 + 1_000 })).toBe('absent');
  });

  it('W8 a look renews the lease from the instant of the look: the sweep at the first lease end removes nothing', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    expect(place(await acme.admitOrWait(ask('w1', T0), TERMS))).toEqual([1, T0]);
    expect(place(await acme.collectWaiter(ask('w1', T0 + 8_000), TERMS))).toEqual([1, T0]);
    expect(await acme.sweepWaiters({ atMs: T0 + WAIT_LEASE_MS })).toEqual({ expired: 0, recovered: 0, granted: 0 });
    expect(await acme.sweepWaiters({ atMs: T0 + 8_000 + WAIT_LEASE_MS - 1 })).toEqual({ expired: 0, recovered: 0, granted: 0 });
    expect(await acme.sweepWaiters({ atMs: T0 + 8_000 + WAIT_LEASE_MS })).toEqual({ expired: 1, recovered: 0, granted: 0 });
  });

  it('a waiter whose place lapsed and whose time is not up joins again at the back, with a new enqueuedAtMs', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    expect(place(await acme.admitOrWait(ask('w1', T0), TERMS))).toEqual([1, T0]);
    expect(place(await acme.admitOrWait(ask('w2', T0 + 5_000), { untilMs: T0 + 600_000, leaseMs: 60_000 }))).toEqual([2, T0 + 5_000]);
    expect(await acme.sweepWaiters({ atMs: T0 + WAIT_LEASE_MS })).toEqual({ expired: 1, recovered: 0, granted: 0 });
    expect(place(await acme.collectWaiter(ask('w1', T0 + 12_000), TERMS))).toEqual([2, T0 + 12_000]);
    expect(await acme.waitQueue({ atMs: T0 + 12_000 })).toEqual({ depth: 2, oldestEnqueuedAtMs: T0 + 5_000, uncollected: 0 });
  });

  it('a lapsed waiter that looks again serves the queue first: the waiter behind it takes the free slot and is woken', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    place(await acme.admitOrWait(ask('w1', T0), TERMS));
    place(await acme.admitOrWait(ask('w2', T0 + 1), { untilMs: T0 + 600_000, leaseMs: 60_000 }));
    await acme.release('holder'); // the raw primitive frees the slot and grants nobody
    woken.length = 0;
    expect(place(await acme.collectWaiter(ask('w1', T0 + 12_000), TERMS))).toEqual([1, T0 + 12_000]);
    expect(await acme.runningRuns(10)).toEqual(['w2']);
    expect(woken).toEqual(['acme']);
  });

  it('W5 a waiter whose place lapsed and whose time is up is answered as the books stand: the plain refusal, no place, nothing queued', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    place(await acme.admitOrWait(ask('w1', T0), { untilMs: T0 + 20_000, leaseMs: WAIT_LEASE_MS }));
    await acme.sweepWaiters({ atMs: T0 + WAIT_LEASE_MS });
    const final = await acme.collectWaiter(ask('w1', T0 + 20_000), { untilMs: T0 + 20_000, leaseMs: WAIT_LEASE_MS });
    expect(refusalOf(final)).toEqual({ code: 'TooManyRuns', tenant: 'acme', running: 1, limit: 1, bound: 'tenant' });
    expect(await acme.waitQueue({ atMs: T0 + 20_000 })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
  });

  it('a waiter whose place lapsed, collecting at its final instant while a slot is free, is admitted', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    place(await acme.admitOrWait(ask('w1', T0), { untilMs: T0 + 20_000, leaseMs: WAIT_LEASE_MS }));
    await acme.sweepWaiters({ atMs: T0 + WAIT_LEASE_MS });
    await acme.release('holder');
    const final = await acme.collectWaiter(ask('w1', T0 + 20_000), { untilMs: T0 + 20_000, leaseMs: WAIT_LEASE_MS });
    expect(final).toMatchObject({ ok: true, run: 'w1', epoch: 1, leaseExpiresAtMs: T0 + 20_000 + LEASE_MS });
  });
});

describe('W5 timed-out waiters', () => {
  it('a waiter second in line whose time is up hears TooManyRuns with queuePosition 2 and how long it waited', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    place(await acme.admitOrWait(ask('w1', T0 + 1), TERMS));
    const terms = { untilMs: T0 + 4_002, leaseMs: WAIT_LEASE_MS };
    expect(place(await acme.admitOrWait(ask('w2', T0 + 2), terms))).toEqual([2, T0 + 2]);
    expect(place(await acme.collectWaiter(ask('w2', T0 + 4_001), terms))).toEqual([2, T0 + 2]);
    const timedOut = await acme.collectWaiter(ask('w2', T0 + 4_002), terms);
    expect(refusalOf(timedOut)).toEqual({
      code: 'TooManyRuns',
      tenant: 'acme',
      running: 1,
      limit: 1,
      bound: 'tenant',
      queuePosition: 2,
      waitedMs: 4_000,
    });
    expect(await acme.waitQueue({ atMs: T0 + 4_002 })).toEqual({ depth: 1, oldestEnqueuedAtMs: T0 + 1, uncollected: 0 });
  });

  it('W9 a waiting waiter whose time is up and that a halt now refuses hears the halt, with no queue fields', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    const agent = { name: 'paused', digest: 'a1'.repeat(32) };
    place(await acme.admitOrWait(ask('w1', T0 + 1), TERMS));
    const terms = { untilMs: T0 + 100, leaseMs: WAIT_LEASE_MS };
    place(await acme.admitOrWait(ask('w2', T0 + 2, { agent }), terms));
    await acme.setHalt({ scope: { kind: 'agent', name: 'paused' }, reason: 'incident 4', by: OPS, atMs: T0 + 3 });
    // w1 stops the grant loop (the tenant is full), so w2 is still waiting when its time runs out.
    const final = await acme.collectWaiter(ask('w2', T0 + 100, { agent }), terms);
    expect(refusalOf(final)).toEqual({
      code: 'Halted',
      tenant: 'acme',
      scope: 'agent:paused',
      reason: 'incident 4',
      by: OPS,
      haltedAtMs: T0 + 3,
    });
    expect(await acme.cancelWaiter({ run: 'w2', atMs: T0 + 100 })).toBe('absent');
  });
});

describe('the grant loop of one tenant', () => {
  it('W2 a waiter whose run id was admitted meanwhile without waiting is refused by the loop, not granted, and wakes nobody', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 2 });
    await acme.admit(ask('h1', T0));
    await acme.admit(ask('h2', T0));
    place(await acme.admitOrWait(ask('w1', T0 + 1), TERMS));
    place(await acme.admitOrWait(ask('w2', T0 + 2), TERMS));
    // The same run id admitted under an explicit, larger quota: registered, holding pass 1 and a slot.
    expect((await acme.admit(ask('w1', T0 + 3, { quota: { period: 'monthly', maxConcurrentRuns: 5 } }))).ok).toBe(true);
    woken.length = 0;
    await conclude(acme, 'h1', T0 + 4);
    // w1 is refused (its id is taken), w2 is stopped by the tenant's ceiling (h2 and w1 run).
    expect(await acme.runningRuns(10)).toEqual(['h2', 'w1']);
    expect(await acme.waitQueue({ atMs: T0 + 4 })).toEqual({ depth: 1, oldestEnqueuedAtMs: T0 + 2, uncollected: 0 });
    expect(woken).toEqual([]);
    await conclude(acme, 'h2', T0 + 5);
    expect(await acme.runningRuns(10)).toEqual(['w1', 'w2']);
    expect(woken).toEqual(['acme']);
  });

  it('W9 a waiter whose run id was pruned meanwhile is refused by the loop (CONFLICT), hears it on collect, and the loop goes on', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 2 });
    await acme.admit(ask('h1', T0));
    await acme.admit(ask('h2', T0));
    place(await acme.admitOrWait(ask('w0', T0 + 1), TERMS));
    place(await acme.admitOrWait(ask('w1', T0 + 2), TERMS));
    place(await acme.admitOrWait(ask('w2', T0 + 3), TERMS));
    // w1's id admitted under an explicit, larger quota, concluded (the loop stops at w0: h1 and h2
    // fill the tenant) and pruned, while its place still waits.
    expect((await acme.admit(ask('w1', T0 + 4, { quota: { period: 'monthly', maxConcurrentRuns: 5 } }))).ok).toBe(true);
    await conclude(acme, 'w1', T0 + 5);
    expect((await acme.pruneRuns({ runs: ['w1'], closedAtOrBeforeMs: T0 + 5, atMs: T0 + 6, by: OPS })).runs).toEqual(['w1']);
    expect(await acme.waitQueue({ atMs: T0 + 6 })).toEqual({ depth: 3, oldestEnqueuedAtMs: T0 + 1, uncollected: 0 });
    await conclude(acme, 'h1', T0 + 7); // w0 granted, w1 refused (pruned), w2 stopped by the ceiling
    expect(await acme.runningRuns(10)).toEqual(['h2', 'w0']);
    expect(await acme.waitQueue({ atMs: T0 + 7 })).toEqual({ depth: 1, oldestEnqueuedAtMs: T0 + 3, uncollected: 1 });
    const heard = await failure(acme.collectWaiter(ask('w1', T0 + 8), TERMS));
    expect([heard.code, heard.details.pruned, heard.details.run]).toEqual(['CONFLICT', true, 'w1']);
  });

  it('W9 a waiter whose hold would take the period holds past the largest amount is refused by the loop, not granted, and hears INVALID_ARGUMENT', async () => {
    const acme = store.tenant('acme');
    const MAX = Number.MAX_SAFE_INTEGER;
    // No tenant spend ceiling; each agent bounds its own tokens at the largest amount.
    await configure(acme, {
      period: 'monthly',
      maxConcurrentRuns: 2,
      agents: { big: { maxTokensPerPeriod: MAX }, small: { maxTokensPerPeriod: MAX } },
    });
    const big = { name: 'big', digest: 'a1'.repeat(32) };
    const small = { name: 'small', digest: 'a1'.repeat(32) };
    expect((await acme.admit(ask('big-1', T0, { agent: big, budget: { maxTokens: MAX - 10, maxCallTokens: 0 } }))).ok).toBe(true);
    expect((await acme.admit(ask('other', T0))).ok).toBe(true);
    place(await acme.admitOrWait(ask('small-1', T0 + 1, { agent: small, budget: { maxTokens: 100, maxCallTokens: 0 } }), TERMS));
    place(await acme.admitOrWait(ask('plain', T0 + 2), TERMS));
    // big-1 pauses: its slot frees and its hold stays, so small-1's 100 would pass the largest amount.
    await acme.settlePass({ run: 'big-1', epoch: 1, spend: ZERO, concludes: false, atMs: T0 + 3 });
    expect(await acme.runningRuns(10)).toEqual(['other', 'plain']);
    expect(await acme.waitQueue({ atMs: T0 + 3 })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 1 });
    // With room when it collects, the admission is decided again and the caller hears why.
    await acme.release('plain');
    const heard = await failure(acme.collectWaiter(ask('small-1', T0 + 4, { agent: small, budget: { maxTokens: 100, maxCallTokens: 0 } }), TERMS));
    expect(heard.code).toBe('INVALID_ARGUMENT');
  });

  it('a waiter stopped by the tenant ceiling stops the loop there: a halted waiter behind it keeps waiting until its turn', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    const agent = { name: 'paused', digest: 'a1'.repeat(32) };
    place(await acme.admitOrWait(ask('w1', T0 + 1), TERMS));
    place(await acme.admitOrWait(ask('w2', T0 + 2, { agent }), TERMS));
    await acme.setHalt({ scope: { kind: 'agent', name: 'paused' }, reason: 'incident 5', by: OPS, atMs: T0 + 3 });
    // An admission that does not wait serves the queue first: w1 is stopped by the tenant's ceiling.
    const later = await acme.admit(ask('late', T0 + 4));
    expect(later).toEqual({ ok: false, refusal: { code: 'TooManyRuns', tenant: 'acme', running: 1, limit: 1, bound: 'tenant' } });
    expect(await acme.waitQueue({ atMs: T0 + 4 })).toEqual({ depth: 2, oldestEnqueuedAtMs: T0 + 1, uncollected: 0 });
  });

  it('W16 a refused waiter that fits when it collects is admitted at once, and its place is gone', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 2 });
    await acme.admit(ask('h1', T0));
    await acme.admit(ask('h2', T0));
    const agent = { name: 'paused', digest: 'a1'.repeat(32) };
    place(await acme.admitOrWait(ask('w1', T0 + 1, { agent }), TERMS));
    await acme.setHalt({ scope: { kind: 'agent', name: 'paused' }, reason: 'incident 6', by: OPS, atMs: T0 + 2 });
    await conclude(acme, 'h1', T0 + 3); // the loop refuses w1 (halted); the slot stays free
    expect(await acme.runningRuns(10)).toEqual(['h2']);
    expect(await acme.liftHalt({ kind: 'agent', name: 'paused' })).toBe(true);
    const pass = await acme.collectWaiter(ask('w1', T0 + 4, { agent }), TERMS);
    expect(pass).toMatchObject({ ok: true, run: 'w1', epoch: 1 });
    expect(await acme.cancelWaiter({ run: 'w1', atMs: T0 + 5 })).toBe('absent');
    expect(await acme.runningRuns(10)).toEqual(['h2', 'w1']);
  });

  it('W15 a refused waiter hears SpentOut on collect while the tenant is full, and its place is gone', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 30_000 });
    await acme.admit(ask('holder', T0, { budget: { maxTokens: 20_000, maxCallTokens: 0 } }));
    place(await acme.admitOrWait(ask('w1', T0 + 1, { budget: { maxTokens: 6_000, maxCallTokens: 0 } }), TERMS));
    place(await acme.admitOrWait(ask('w2', T0 + 1, { budget: { maxTokens: 100, maxCallTokens: 0 } }), TERMS));
    // The period keeps 1 000: w1 (6 000) is refused SpentOut by the loop, w2 (100) takes the slot.
    await acme.settlePass({ run: 'holder', epoch: 1, spend: { tokens: 29_000, minorUnits: 0 }, concludes: true, atMs: T0 + 2 });
    expect(await acme.runningRuns(10)).toEqual(['w2']);
    // Full again when w1 collects: it hears the spend that refused it, judged with room left out.
    const heard = await acme.collectWaiter(ask('w1', T0 + 3, { budget: { maxTokens: 6_000, maxCallTokens: 0 } }), TERMS);
    expect(refusalOf(heard)).toMatchObject({ code: 'SpentOut', tenant: 'acme', bound: 'tenant' });
    expect(await acme.cancelWaiter({ run: 'w1', atMs: T0 + 4 })).toBe('absent');
  });

  it('W16 a refused waiter that only room refuses by its final instant hears TooManyRuns with its own place and wait', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    const agent = { name: 'paused', digest: 'a1'.repeat(32) };
    place(await acme.admitOrWait(ask('w0', T0 + 1, { agent }), TERMS));
    const terms = { untilMs: T0 + 50, leaseMs: WAIT_LEASE_MS };
    place(await acme.admitOrWait(ask('w1', T0 + 2, { agent }), terms));
    place(await acme.admitOrWait(ask('w2', T0 + 3), TERMS));
    await acme.setHalt({ scope: { kind: 'agent', name: 'paused' }, reason: 'incident 7', by: OPS, atMs: T0 + 4 });
    await conclude(acme, 'holder', T0 + 5); // w0 and w1 refused (halted), w2 granted
    expect(await acme.runningRuns(10)).toEqual(['w2']);
    await acme.liftHalt({ kind: 'agent', name: 'paused' });
    // w0 comes back first and waits on in its place; w1's time is up: one waiter is ahead of it.
    expect(place(await acme.collectWaiter(ask('w0', T0 + 49, { agent }), TERMS))).toEqual([1, T0 + 1]);
    const final = await acme.collectWaiter(ask('w1', T0 + 50, { agent }), terms);
    expect(refusalOf(final)).toEqual({
      code: 'TooManyRuns',
      tenant: 'acme',
      running: 1,
      limit: 1,
      bound: 'tenant',
      queuePosition: 2,
      waitedMs: 48,
    });
    expect(await acme.cancelWaiter({ run: 'w1', atMs: T0 + 51 })).toBe('absent');
  });

  it('W16 a refused waiter put back in its place has its lease renewed from the look', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    const agent = { name: 'paused', digest: 'a1'.repeat(32) };
    place(await acme.admitOrWait(ask('w1', T0, { agent }), TERMS));
    place(await acme.admitOrWait(ask('w2', T0), TERMS));
    await acme.setHalt({ scope: { kind: 'agent', name: 'paused' }, reason: 'incident 8', by: OPS, atMs: T0 + 1 });
    await conclude(acme, 'holder', T0 + 2); // w1 refused (halted), w2 granted
    expect(await acme.collectWaiter(ask('w2', T0 + 3), TERMS)).toMatchObject({ ok: true, run: 'w2' });
    await acme.liftHalt({ kind: 'agent', name: 'paused' });
    expect(place(await acme.collectWaiter(ask('w1', T0 + 9_000, { agent }), TERMS))).toEqual([1, T0]);
    // Its first lease ended at T0 + 10 000; the look at T0 + 9 000 carries it to T0 + 19 000.
    expect(await acme.sweepWaiters({ atMs: T0 + 18_999 })).toEqual({ expired: 0, recovered: 0, granted: 0 });
    expect(await acme.sweepWaiters({ atMs: T0 + 19_000 })).toEqual({ expired: 1, recovered: 0, granted: 0 });
  });
});

describe('cancelled and recovered grants', () => {
  it('W7 a withdrawn grant leaves no pass behind: the same run id is admitted afresh as pass 1', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    place(await acme.admitOrWait(ask('w1', T0 + 1), TERMS));
    await conclude(acme, 'holder', T0 + 2);
    expect(await acme.cancelWaiter({ run: 'w1', atMs: T0 + 3 })).toBe('grant-withdrawn');
    expect(await acme.unsettledPasses({ atMs: T0 + 10 * LEASE_MS, limit: 10 })).toEqual([]);
    expect(await acme.admit(ask('w1', T0 + 4))).toMatchObject({ ok: true, run: 'w1', epoch: 1 });
  });

  it('W7 cancelling a waiter the loop refused removes its place and grants nothing', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    await acme.admit(ask('holder', T0));
    const agent = { name: 'paused', digest: 'a1'.repeat(32) };
    place(await acme.admitOrWait(ask('w1', T0 + 1, { agent }), TERMS));
    await acme.setHalt({ scope: { kind: 'agent', name: 'paused' }, reason: 'incident 9', by: OPS, atMs: T0 + 2 });
    await acme.admit(ask('late', T0 + 3)); // serves the queue: w1 is refused (halted)
    expect(await acme.cancelWaiter({ run: 'w1', atMs: T0 + 4 })).toBe('cancelled');
    expect(await acme.cancelWaiter({ run: 'w1', atMs: T0 + 4 })).toBe('absent');
  });
});

describe('W4 a hold that would not fit is refused SpentOut, never queued', () => {
  it("an agent's spend ceiling alone (the tenant bounds no spend) refuses the waiter SpentOut naming the agent", async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1, agents: { bot: { maxTokensPerPeriod: 1_000 } } });
    const agent = { name: 'bot', digest: 'a1'.repeat(32) };
    expect((await acme.admit(ask('holder', T0))).ok).toBe(true);
    const refused = await acme.admitOrWait(ask('w1', T0 + 1, { agent, budget: { maxTokens: 2_000, maxCallTokens: 0 } }), TERMS);
    expect(refusalOf(refused)).toMatchObject({ code: 'SpentOut', tenant: 'acme', bound: 'agent', agent: 'bot', unit: 'tokens', limit: 1_000, requested: 2_000 });
    expect(await acme.waitQueue({ atMs: T0 + 1 })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
  });

  it('the explicit quota of the request, not the stored one, decides the spend probe', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1 });
    expect((await acme.admit(ask('holder', T0))).ok).toBe(true);
    const quota = { period: 'monthly' as const, maxConcurrentRuns: 1, maxTokensPerPeriod: 100 };
    const refused = await acme.admitOrWait(ask('w1', T0 + 1, { quota, budget: { maxTokens: 1_000, maxCallTokens: 0 } }), TERMS);
    expect(refusalOf(refused)).toMatchObject({ code: 'SpentOut', tenant: 'acme', bound: 'tenant', unit: 'tokens', limit: 100, requested: 1_000 });
    expect(await acme.waitQueue({ atMs: T0 + 1 })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
  });

  it('a hold that fits waits: the probe of spend answers nothing when the period has room', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 1_000, agents: { bot: { maxTokensPerPeriod: 500 } } });
    const agent = { name: 'bot', digest: 'a1'.repeat(32) };
    expect((await acme.admit(ask('holder', T0, { budget: { maxTokens: 0, maxCallTokens: 0 } }))).ok).toBe(true);
    expect(place(await acme.admitOrWait(ask('w1', T0 + 1, { agent, budget: { maxTokens: 500, maxCallTokens: 0 } }), TERMS))).toEqual([1, T0 + 1]);
  });
});

describe('W12 tenants take turns under the plane-wide ceiling: the exact order', () => {
  /** The runs of `tenant` holding a slot. */
  const slots = (tenant: string) => store.tenant(tenant).runningRuns(100);

  it('a raised plane ceiling grants one waiter per turn: two freed slots go to two tenants, not both to the first', async () => {
    await setPlane({ maxConcurrentRuns: 1 }, T0);
    expect((await store.tenant('a').admit(ask('a-h', T0))).ok).toBe(true);
    place(await store.tenant('a').admitOrWait(ask('a-w1', T0 + 1), TERMS));
    place(await store.tenant('a').admitOrWait(ask('a-w2', T0 + 2), TERMS));
    place(await store.tenant('b').admitOrWait(ask('b-w1', T0 + 3), TERMS));
    woken.length = 0;
    await setPlane({ maxConcurrentRuns: 3 }, T0 + 4);
    expect([await slots('a'), await slots('b')]).toEqual([['a-h', 'a-w1'], ['b-w1']]);
    expect(woken.sort()).toEqual(['a', 'b']);
  });

  it('tenants whose turns start together are served in tenant order', async () => {
    await setPlane({ maxConcurrentRuns: 1 }, T0);
    await store.tenant('c').admit(ask('c-h', T0));
    place(await store.tenant('b').admitOrWait(ask('b-w1', T0 + 1), TERMS));
    place(await store.tenant('a').admitOrWait(ask('a-w1', T0 + 2), TERMS));
    await setPlane({ maxConcurrentRuns: 2 }, T0 + 3);
    expect([await slots('a'), await slots('b')]).toEqual([['a-w1'], []]);
    await setPlane({ maxConcurrentRuns: 3 }, T0 + 4);
    expect([await slots('a'), await slots('b')]).toEqual([['a-w1'], ['b-w1']]);
  });

  it("a tenant that starts waiting late starts its turns at the plane's virtual time: it gets the next slot, then they alternate", async () => {
    await setPlane({ maxConcurrentRuns: 1 }, T0);
    const a = store.tenant('a');
    const b = store.tenant('b');
    await a.admit(ask('a-h', T0));
    for (const i of [1, 2, 3, 4, 5]) place(await a.admitOrWait(ask(`a-w${i}`, T0 + i), TERMS));
    const order: string[] = [];
    let holder = 'a-h';
    let atMs = T0 + 10;
    const next = async (): Promise<void> => {
      const tenant = holder.startsWith('a-') ? a : b;
      await conclude(tenant, holder, (atMs += 1));
      const [granted] = [...(await a.runningRuns(10)), ...(await b.runningRuns(10))];
      if (granted === undefined) throw new Error('no grant');
      order.push(granted);
      holder = granted;
    };
    for (let i = 0; i < 3; i += 1) await next(); // only a waits: a-w1, a-w2, a-w3
    place(await b.admitOrWait(ask('b-w1', (atMs += 1)), TERMS));
    place(await b.admitOrWait(ask('b-w2', (atMs += 1)), TERMS));
    for (let i = 0; i < 3; i += 1) await next();
    expect(order).toEqual(['a-w1', 'a-w2', 'a-w3', 'b-w1', 'a-w4', 'b-w2']);
  });

  it('W13 a tenant of weight 3 pays a third of a turn, rounded down: a, b, a, a, a, b', async () => {
    await setPlane({ maxConcurrentRuns: 1, weights: { a: 3 } }, T0);
    const a = store.tenant('a');
    const b = store.tenant('b');
    await store.tenant('z').admit(ask('z-h', T0));
    for (const i of [1, 2, 3, 4, 5]) place(await a.admitOrWait(ask(`a-w${i}`, T0 + i), TERMS));
    for (const i of [1, 2, 3]) place(await b.admitOrWait(ask(`b-w${i}`, T0 + i), TERMS));
    const order: string[] = [];
    let holder: [TenantStore, string] = [store.tenant('z'), 'z-h'];
    for (let i = 0; i < 6; i += 1) {
      await conclude(holder[0], holder[1], T0 + 10 + i);
      const fromA = await a.runningRuns(10);
      const granted = fromA.length > 0 ? ([a, fromA[0]] as const) : ([b, (await b.runningRuns(10))[0]] as const);
      if (granted[1] === undefined) throw new Error('no grant');
      order.push(granted[1]);
      holder = [granted[0], granted[1]];
    }
    expect(order).toEqual(['a-w1', 'b-w1', 'a-w2', 'a-w3', 'a-w4', 'b-w2']);
  });

  it('W13 a weight so large that its share of a turn rounds to 0 still pays at least 1: the other tenant gets the second slot', async () => {
    await setPlane({ maxConcurrentRuns: 1, weights: { a: 2_000_000 } }, T0);
    const a = store.tenant('a');
    const b = store.tenant('b');
    await store.tenant('z').admit(ask('z-h', T0));
    for (const i of [1, 2]) place(await a.admitOrWait(ask(`a-w${i}`, T0 + i), TERMS));
    place(await b.admitOrWait(ask('b-w1', T0 + 3), TERMS));
    await conclude(store.tenant('z'), 'z-h', T0 + 10);
    expect(await a.runningRuns(10)).toEqual(['a-w1']);
    await conclude(a, 'a-w1', T0 + 11);
    expect([await a.runningRuns(10), await b.runningRuns(10)]).toEqual([[], ['b-w1']]);
  });

  it('a full plane ends the round at the first tenant: the waiters of the others are not looked at', async () => {
    await setPlane({ maxConcurrentRuns: 1 }, T0);
    await store.tenant('z').admit(ask('z-h', T0));
    place(await store.tenant('a').admitOrWait(ask('a-w1', T0 + 1), TERMS));
    const agent = { name: 'paused', digest: 'a1'.repeat(32) };
    const b = store.tenant('b');
    place(await b.admitOrWait(ask('b-w1', T0 + 2, { agent }), TERMS));
    await b.setHalt({ scope: { kind: 'agent', name: 'paused' }, reason: 'incident 10', by: OPS, atMs: T0 + 3 });
    // An admission of another tenant serves the queues first: tenant a's turn finds the plane full.
    const late = await store.tenant('c').admit(ask('c-late', T0 + 4));
    expect(late).toEqual({ ok: false, refusal: { code: 'TooManyRuns', tenant: 'c', running: 1, limit: 1, bound: 'plane' } });
    expect(await b.waitQueue({ atMs: T0 + 4 })).toEqual({ depth: 1, oldestEnqueuedAtMs: T0 + 2, uncollected: 0 });
  });

  it('a tenant whose own ceiling holds its waiters is passed over, and the plane slot goes to the next tenant', async () => {
    await setPlane({ maxConcurrentRuns: 2 }, T0);
    const a = store.tenant('a');
    await configure(a, { period: 'monthly', maxConcurrentRuns: 1 });
    await a.admit(ask('a-h', T0));
    await store.tenant('z').admit(ask('z-h', T0));
    place(await a.admitOrWait(ask('a-w1', T0 + 1), TERMS));
    place(await store.tenant('b').admitOrWait(ask('b-w1', T0 + 2), TERMS));
    await conclude(store.tenant('z'), 'z-h', T0 + 3);
    expect([await a.runningRuns(10), await store.tenant('b').runningRuns(10)]).toEqual([['a-h'], ['b-w1']]);
    expect(woken).toContain('b');
  });
});

describe('which queues a freed slot serves without a plane-wide concurrency ceiling', () => {
  it("a settle serves its own tenant's queue only, even when another tenant has room", async () => {
    const a = store.tenant('a');
    const b = store.tenant('b');
    await configure(a, { period: 'monthly', maxConcurrentRuns: 1 });
    await configure(b, { period: 'monthly', maxConcurrentRuns: 1 });
    await a.admit(ask('a-h', T0));
    await b.admit(ask('b-h', T0));
    place(await a.admitOrWait(ask('a-w1', T0 + 1), TERMS));
    place(await b.admitOrWait(ask('b-w1', T0 + 2), TERMS));
    await b.release('b-h'); // the raw primitive: room, but no grant until b's next decision
    woken.length = 0;
    await conclude(a, 'a-h', T0 + 3);
    expect([await a.runningRuns(10), await b.runningRuns(10)]).toEqual([['a-w1'], []]);
    expect(woken).toEqual(['a']);
    expect(await b.waitQueue({ atMs: T0 + 3 })).toEqual({ depth: 1, oldestEnqueuedAtMs: T0 + 2, uncollected: 0 });
  });

  it("a raised plane-wide agent ceiling serves each tenant's queue in tenant order, first come first served within it", async () => {
    await setPlane({ agents: { bot: { maxConcurrentRuns: 1 } } }, T0);
    const agent = { name: 'bot', digest: 'a1'.repeat(32) };
    const a = store.tenant('a');
    const b = store.tenant('b');
    await store.tenant('z').admit(ask('z-h', T0, { agent }));
    place(await a.admitOrWait(ask('a-w1', T0 + 1, { agent }), TERMS));
    place(await a.admitOrWait(ask('a-w2', T0 + 2, { agent }), TERMS));
    place(await b.admitOrWait(ask('b-w1', T0 + 3, { agent }), TERMS));
    woken.length = 0;
    await setPlane({ agents: { bot: { maxConcurrentRuns: 3 } } }, T0 + 4);
    expect([await a.runningRuns(10), await b.runningRuns(10)]).toEqual([['a-w1', 'a-w2'], []]);
    expect(woken).toEqual(['a']);
  });
});
