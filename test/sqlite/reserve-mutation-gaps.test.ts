import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { TenantQuota } from '../../src/core/quota.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import type { AdmitRequest } from '../../src/store/types.js';

// The SQLite adapter's reserve (docs/concepts/ceilings.md): each kind of
// concurrency ceiling on its own, with no other ceiling and no hold beside it, so the decision
// cannot lean on the tenant's ceiling the conformance K cases always set.

const T0 = 1_767_600_000_000; // 2026-01-05T08:00:00Z
const OPS = { actor: 'ops-alice', basis: 'asserted' as const };
const BOT = { name: 'refund-bot', digest: 'a1'.repeat(32) };

let store: QuotaStore;
beforeEach(async () => {
  store = await openStore('sqlite::memory:');
});
afterEach(() => store.close());

function ask(run: string, overrides: Partial<AdmitRequest> = {}): AdmitRequest {
  return { run, budget: {}, width: 0, atMs: T0, leaseMs: 60_000, ...overrides };
}

async function configure(handle: TenantStore, quota: TenantQuota): Promise<void> {
  await handle.setQuota(quota, { atMs: T0, by: OPS, action: 'quota.set', subject: 'quota', detail: {} });
}

async function setPlane(plane: Record<string, unknown>): Promise<void> {
  await store.setPlaneCeiling?.(plane, { atMs: T0, by: OPS, action: 'plane.set', subject: 'plane', detail: {} }, 'quotaplane:plane');
}

describe('K7 an agent concurrency ceiling with no tenant ceiling beside it', () => {
  it("refuses the agent's third run TooManyRuns bound 'agent' with the agent's figures, and admits other runs", async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', agents: { 'refund-bot': { maxConcurrentRuns: 2 } } });
    expect((await acme.admit(ask('b1', { agent: BOT }))).ok).toBe(true);
    expect((await acme.admit(ask('b2', { agent: BOT }))).ok).toBe(true);
    expect(await acme.admit(ask('b3', { agent: BOT }))).toEqual({
      ok: false,
      refusal: { code: 'TooManyRuns', tenant: 'acme', running: 2, limit: 2, bound: 'agent', agent: 'refund-bot' },
    });
    expect((await acme.admit(ask('other', { agent: { name: 'triage', digest: 'a1'.repeat(32) } }))).ok).toBe(true);
    expect((await acme.admit(ask('agentless'))).ok).toBe(true);
    expect(await acme.running()).toBe(4);
  });

  it('a retried admission of a run holding the agent slot is answered with its pass, never refused', async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', agents: { 'refund-bot': { maxConcurrentRuns: 1 } } });
    const first = await acme.admit(ask('b1', { agent: BOT }));
    expect(first.ok).toBe(true);
    expect(await acme.admit(ask('b1', { agent: BOT }))).toEqual(first);
  });
});

describe('K6 a plane-wide agent ceiling with no other ceiling', () => {
  it("bounds that agent across tenants (bound 'plane-agent', the agent's count in every tenant) and no other run", async () => {
    await setPlane({ agents: { 'refund-bot': { maxConcurrentRuns: 2 } } });
    expect((await store.tenant('a').admit(ask('a1', { agent: BOT }))).ok).toBe(true);
    expect((await store.tenant('b').admit(ask('b1', { agent: BOT }))).ok).toBe(true);
    expect(await store.tenant('c').admit(ask('c1', { agent: BOT }))).toEqual({
      ok: false,
      refusal: { code: 'TooManyRuns', tenant: 'c', running: 2, limit: 2, bound: 'plane-agent', agent: 'refund-bot' },
    });
    expect((await store.tenant('c').admit(ask('c2'))).ok).toBe(true);
    // A raw reserve has no agent, so the agent's plane-wide ceiling does not cover it.
    expect(await store.tenant('c').reserve({ run: 'raw', quota: { period: 'monthly' }, atMs: T0 })).toEqual({ ok: true });
  });
});

describe('K3 a plane-wide ceiling with no tenant quota', () => {
  it("refuses the next run of any tenant TooManyRuns bound 'plane' with every tenant's slots, raw reserves included", async () => {
    await setPlane({ maxConcurrentRuns: 3 });
    expect((await store.tenant('a').admit(ask('a1'))).ok).toBe(true);
    expect(await store.tenant('b').reserve({ run: 'b-raw', quota: { period: 'monthly' }, atMs: T0 })).toEqual({ ok: true });
    expect((await store.tenant('c').admit(ask('c1', { agent: BOT }))).ok).toBe(true);
    expect(await store.tenant('d').admit(ask('d1'))).toEqual({
      ok: false,
      refusal: { code: 'TooManyRuns', tenant: 'd', running: 3, limit: 3, bound: 'plane' },
    });
    expect(await store.tenant('d').reserve({ run: 'd-raw', quota: { period: 'monthly' }, atMs: T0 })).toEqual({
      ok: false,
      refusal: { code: 'TooManyRuns', tenant: 'd', running: 3, limit: 3, bound: 'plane' },
    });
    // A raw reserve retried by a run that holds a slot is idempotent, never refused.
    expect(await store.tenant('b').reserve({ run: 'b-raw', quota: { period: 'monthly' }, atMs: T0 + 1 })).toEqual({ ok: true });
  });
});
