// What the upgrade tests (test/sqlite/upgrade-from-0.1.0.test.ts, test/postgres/upgrade-from-0.1.0.test.ts)
// hold a store made by a release to, once this build has opened (and so migrated) it: the books
// read the same (docs/compatibility.md#the-upgrade-test), and the store keeps working on them.

import { expect } from 'vitest';

import { createPlane, isQuotaError, type Plane, type QuotaStore, type Usage } from '../../src/index.js';
import { ManualClock } from '../../src/testing/index.js';
import { readFixtureBooks, type FixtureBooks } from './upgrade-books.js';
import { FIXTURE_READ_AT } from './upgrade-fixture.js';
import { ACME_BUDGET, ALICE, BOB, GLOBEX_BUDGET, REFUND } from './upgrade-scenario.js';

/** A plane over the upgraded store, its clock at the instant the fixture's books were read. */
export function upgradedPlane(store: QuotaStore): { plane: Plane; clock: ManualClock } {
  const clock = new ManualClock(FIXTURE_READ_AT);
  return { plane: createPlane({ store, clock }), clock };
}

/**
 * The upgraded store reads back every figure of `expected` (books.json). Answer members a later
 * release adds are allowed (docs/compatibility.md: answers may grow); every member the release
 * read must be there with the same value, and every list must have the same entries.
 */
export async function expectSameBooks(store: QuotaStore, expected: FixtureBooks): Promise<void> {
  const { plane } = upgradedPlane(store);
  const books = await readFixtureBooks(plane, store, FIXTURE_READ_AT);
  // The figures a person would check first, each named, so a failure says which book moved.
  const acme = (books.perTenant.acme as { usage: Record<string, Usage> }).usage['2026-01'];
  const globex = (books.perTenant.globex as { usage: Record<string, Usage> }).usage['2026-01-05'];
  const expectedAcme = (expected.perTenant.acme as { usage: Record<string, Usage> }).usage['2026-01'];
  const expectedGlobex = (expected.perTenant.globex as { usage: Record<string, Usage> }).usage['2026-01-05'];
  expect({ running: acme?.running, spent: acme?.spent, reserved: acme?.reserved }, 'acme 2026-01').toEqual({
    running: expectedAcme?.running,
    spent: expectedAcme?.spent,
    reserved: expectedAcme?.reserved,
  });
  expect(acme?.agents, 'acme per-agent figures').toEqual(expectedAcme?.agents);
  expect({ running: globex?.running, spent: globex?.spent, reserved: globex?.reserved, queue: globex?.queue }, 'globex 2026-01-05').toEqual({
    running: expectedGlobex?.running,
    spent: expectedGlobex?.spent,
    reserved: expectedGlobex?.reserved,
    queue: expectedGlobex?.queue,
  });
  for (const [chain, audit] of Object.entries(expected.audit)) {
    expect({ rows: books.audit[chain]?.rows, headHash: books.audit[chain]?.headHash }, `audit chain ${chain}`).toEqual({
      rows: audit.rows,
      headHash: audit.headHash,
    });
  }
  for (const tenant of Object.keys(expected.perTenant)) {
    const read = books.perTenant[tenant] as Record<string, unknown>;
    const want = expected.perTenant[tenant] as Record<string, unknown>;
    expect(read.halts, `${tenant} halts`).toEqual(want.halts);
    expect(read.rateWindows, `${tenant} rate windows`).toEqual(want.rateWindows);
    expect(read.waitQueue, `${tenant} wait queue`).toEqual(want.waitQueue);
  }
  expect(books.auditVerifies, 'the audit chains verify').toBe(true);
  // Keys made by 0.1.0 never expire (schema version 3 adds expiresAtMs as NULL), have no use
  // recorded yet, and are still found by their secret.
  const listed = books.apiKeys.list as readonly { readonly expiresAtMs: unknown; readonly lastUsedAtMs: unknown }[];
  expect(listed.length, 'the fixture has keys').toBeGreaterThan(0);
  expect(listed.map((key) => [key.expiresAtMs, key.lastUsedAtMs])).toEqual(listed.map(() => [null, null]));
  expect(Object.values(books.apiKeys.bySecret).filter((key) => key === null), 'every fixture key is found by its secret').toEqual([]);
  // Then every figure read, members added by later releases aside.
  expect(books).toMatchObject(expected);
}

/**
 * The upgraded store keeps working on the release's books: retries meet the receipts and dispatch
 * keys the release wrote, new admissions and settlements move the figures by exactly what they
 * hold and spend, the waiter the release left is served by the slot a settlement frees, halts
 * still refuse, and new audit rows chain on to the release's heads.
 */
export async function expectStoreWorks(store: QuotaStore, expected: FixtureBooks): Promise<void> {
  const { plane, clock } = upgradedPlane(store);
  const usageOf = async (tenant: string, period: string) => plane.usage({ tenant, period });
  const acmeBefore = await usageOf('acme', '2026-01');

  // First, while its place is still leased (it joined 1 s before the books were read, for
  // WAITER_LEASE_MS): the release's waiter is admitted by the settlement that frees globex's only slot.
  await plane.settle({ tenant: 'globex', run: 'run-g1', epoch: 1, spend: { tokens: 0, minorUnits: 10 }, concludes: true });
  expect((await plane.slotHolders({ tenant: 'globex' })).runs).toEqual(['run-g2']);
  expect((await usageOf('globex', '2026-01-05')).reserved).toEqual({ tokens: 0, minorUnits: GLOBEX_BUDGET.maxMinorUnits + GLOBEX_BUDGET.maxCallMinorUnits });

  // Retries meet what the release wrote: a settled pass's receipt, a concluded run, a counted dispatch.
  clock.advance(60_000);
  const receipt = await plane.settle({ tenant: 'acme', run: 'run-a3', epoch: 1, spend: { tokens: 20_000, minorUnits: 1_000 }, concludes: true });
  expect(receipt.outcome).toBe('already-settled');
  const again = await plane.admit({ tenant: 'acme', run: 'run-a3', budget: ACME_BUDGET }).catch((error: unknown) => error);
  expect(isQuotaError(again) && again.code).toBe('CONFLICT');
  expect(await plane.dispatch({ tenant: 'acme', run: 'run-a1', grant: REFUND, dispatch: 'refund-1', epoch: 1 })).toEqual({ ok: true });
  // The day window held 4 of 5: one more fits, the next is refused.
  expect(await plane.dispatch({ tenant: 'acme', run: 'run-a6', grant: REFUND, dispatch: 'refund-5', epoch: 1 })).toEqual({ ok: true });
  const limited = await plane.dispatch({ tenant: 'acme', run: 'run-a6', grant: REFUND, dispatch: 'refund-6', epoch: 1 });
  expect(limited.ok === false && limited.refusal.code).toBe('RateLimited');

  // A new admission holds its hold and a slot; settling it books its spend and gives both back.
  clock.advance(60_000);
  const admitted = await plane.admit({ tenant: 'acme', run: 'run-upgraded', budget: ACME_BUDGET });
  if (!admitted.ok) throw new Error(`admission refused on the upgraded store: ${admitted.message}`);
  const hold = admitted.hold ?? { tokens: 0, minorUnits: 0 };
  const held = await usageOf('acme', '2026-01');
  expect({ running: held.running, reserved: held.reserved }).toEqual({
    running: acmeBefore.running + 1,
    reserved: { tokens: acmeBefore.reserved.tokens + hold.tokens, minorUnits: acmeBefore.reserved.minorUnits + hold.minorUnits },
  });
  clock.advance(60_000);
  await plane.settle({ tenant: 'acme', run: 'run-upgraded', epoch: 1, spend: { tokens: 1_111, minorUnits: 22 }, concludes: true });
  // And a run the release admitted settles against the hold the release wrote.
  const a1Hold = (await plane.reservations({ tenant: 'acme' })).holds.find((entry) => entry.run === 'run-a1');
  expect(a1Hold?.remaining).toEqual({ tokens: 102_000, minorUnits: 5_100 });
  await plane.settle({ tenant: 'acme', run: 'run-a1', epoch: 1, spend: { tokens: 3_000, minorUnits: 40 }, concludes: true });
  const settled = await usageOf('acme', '2026-01');
  expect({ running: settled.running, spent: settled.spent, reserved: settled.reserved }).toEqual({
    running: acmeBefore.running - 1,
    spent: { tokens: acmeBefore.spent.tokens + 1_111 + 3_000, minorUnits: acmeBefore.spent.minorUnits + 22 + 40 },
    reserved: { tokens: acmeBefore.reserved.tokens - 102_000, minorUnits: acmeBefore.reserved.minorUnits - 5_100 },
  });

  // The stranded run resumes with its next epoch.
  expect(await plane.resume({ tenant: 'acme', run: 'run-a4' })).toMatchObject({ ok: true, run: 'run-a4', epoch: 2 });

  // The release's halts still refuse.
  const halted = await plane.admit({ tenant: 'initech', run: 'run-i1' });
  expect(halted.ok === false && halted.refusal.code).toBe('Halted');

  // New audit rows chain on to the release's heads, and every chain still verifies.
  await plane.lift({ tenant: 'acme', scope: `revision:${'b2'.repeat(32)}`, by: BOB });
  await plane.updateQuota('initech', { maxConcurrentRuns: 3 }, ALICE);
  for (const tenant of ['acme', 'initech']) {
    const head = (await plane.auditLog({ tenant, limit: 1 })).rows[0];
    expect(head?.seq, `${tenant}: the next row follows the release's head`).toBe((expected.audit[tenant]?.headSeq ?? 0) + 1);
  }
  const verified = await plane.verifyAudit();
  expect(verified.ok).toBe(true);
  expect(verified.tenants.every((tenant) => tenant.firstMismatch === null)).toBe(true);
}
