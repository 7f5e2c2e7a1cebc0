import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import type { TenantQuota } from '../../src/core/quota.js';
import type { AdmitRequest } from '../../src/store/types.js';
import type { WaitOutcome, WaitTerms } from '../../src/store/waiters.js';

// The SQLite adapter's waiting admissions (issue 12, DESIGN.md decision 18; README "Waiting for a
// slot"), called on the store directly: the boundaries and branches the conformance battery's
// W cases leave open (issue #14). Every figure below is exact: queue places, the order of grants,
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

async function failure(promise: Promise<unknown>): Promise<QuotaError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(QuotaError);
  return error as QuotaError;
}

describe('W4 a hold that would not fit is refused SpentOut, never queued', () => {
  it("an agent's spend ceiling alone (the tenant bounds no spend) refuses the waiter SpentOut naming the agent", async () => {
    const acme = store.tenant('acme');
    await configure(acme, { period: 'monthly', maxConcurrentRuns: 1, agents: { bot: { maxTokensPerPeriod: 1_000 } } });
    const agent = { name: 'bot', digest: 'r1' };
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
    const agent = { name: 'bot', digest: 'r1' };
    expect((await acme.admit(ask('holder', T0, { budget: { maxTokens: 0, maxCallTokens: 0 } }))).ok).toBe(true);
    expect(place(await acme.admitOrWait(ask('w1', T0 + 1, { agent, budget: { maxTokens: 500, maxCallTokens: 0 } }), TERMS))).toEqual([1, T0 + 1]);
  });
});
