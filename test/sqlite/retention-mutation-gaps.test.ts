import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';

// The SQLite adapter's retention (README "Retention: pruning what is old"), called
// on the store directly: the page walk, the audit rows and the rate batches at their boundaries
//. Conformance R1–R9 cover the rules; these pin what they leave open.

const T0 = 1_767_600_000_000; // 2026-01-05T08:00:00Z
const DAY_MS = 86_400_000;
const OPS = { actor: 'ops-alice', basis: 'asserted' as const };
const ZERO = { tokens: 0, minorUnits: 0 };

let store: QuotaStore;
let acme: TenantStore;
beforeEach(async () => {
  store = await openStore('sqlite::memory:');
  acme = store.tenant('acme');
});
afterEach(() => store.close());

async function concluded(run: string, atMs: number): Promise<void> {
  expect((await acme.admit({ run, budget: {}, width: 0, atMs, leaseMs: 60_000 })).ok).toBe(true);
  await acme.settlePass({ run, epoch: 1, spend: ZERO, concludes: true, atMs });
}

function dispatch(grant: string, key: number, atMs: number) {
  return acme.reserveRate({ grant, run: 'rate-run', dispatch: key.toString(16).padStart(64, '0'), ceilings: [], atMs, exempt: false });
}

describe('R1 prunableRuns walks the status index from the start', () => {
  it('a tenant with no run of the status answers an empty last page', async () => {
    expect(await acme.prunableRuns({ status: 'concluded', closedAtOrBeforeMs: T0, scanLimit: 10 })).toEqual({ runs: [], next: null });
  });

  it('without a cursor the walk starts before every id, including ids that sort before letters (digits, capitals)', async () => {
    for (const run of ['0-first', 'A-run', 'Zed', 'run-z']) await concluded(run, T0);
    const page = await acme.prunableRuns({ status: 'concluded', closedAtOrBeforeMs: T0, scanLimit: 10 });
    expect(page.runs.map((run) => run.run)).toEqual(['0-first', 'A-run', 'Zed', 'run-z']);
    expect(page.next).toBeNull();
  });

  it('a full page answers its last id as the cursor, and the next page goes on after it', async () => {
    for (const run of ['r1', 'r2', 'r3']) await concluded(run, T0);
    const first = await acme.prunableRuns({ status: 'concluded', closedAtOrBeforeMs: T0, scanLimit: 2 });
    expect(first).toEqual({
      runs: [
        { run: 'r1', status: 'concluded', closedAtMs: T0, passes: 1, receipts: 1 },
        { run: 'r2', status: 'concluded', closedAtMs: T0, passes: 1, receipts: 1 },
      ],
      next: 'r2',
    });
    expect(await acme.prunableRuns({ status: 'concluded', closedAtOrBeforeMs: T0, scanLimit: 2, after: 'r2' })).toEqual({
      runs: [{ run: 'r3', status: 'concluded', closedAtMs: T0, passes: 1, receipts: 1 }],
      next: null,
    });
  });
});

describe('R2 the audit rows of a prune', () => {
  it("run.prune names the subject 'runs', the operator and the instant", async () => {
    await concluded('r1', T0);
    const pruned = await acme.pruneRuns({ runs: ['r1'], closedAtOrBeforeMs: T0, atMs: T0 + 40 * DAY_MS, by: OPS });
    expect(pruned.audit).toMatchObject({
      action: 'run.prune',
      subject: 'runs',
      by: OPS,
      atMs: T0 + 40 * DAY_MS,
      detail: { closedAtOrBeforeMs: T0, runs: ['r1'], passes: 1, receipts: 1 },
    });
  });

  it("rate.prune names the subject 'rate' and what it removed", async () => {
    await dispatch('tool://x/a', 1, T0);
    const pruned = await acme.pruneRate({ atOrBeforeMs: T0, limit: 10, atMs: T0 + 40 * DAY_MS, by: OPS });
    expect(pruned.dispatches).toBe(1);
    expect(pruned.audit).toMatchObject({ action: 'rate.prune', subject: 'rate', by: OPS, atMs: T0 + 40 * DAY_MS, detail: { atOrBeforeMs: T0, dispatches: 1 } });
  });
});

describe('R7 a rate batch stops at its limit across grants', () => {
  it('what the first grant leaves of the limit is all the next grant may remove: 1 + 2 of 1 + 3 at a limit of 3', async () => {
    await dispatch('tool://x/a', 1, T0);
    for (const key of [2, 3, 4]) await dispatch('tool://x/b', key, T0 + key);
    expect(await acme.countPrunableRate({ atOrBeforeMs: T0 + 10 })).toBe(4);
    const first = await acme.pruneRate({ atOrBeforeMs: T0 + 10, limit: 3, atMs: T0 + 40 * DAY_MS, by: OPS });
    expect(first.dispatches).toBe(3);
    expect(await acme.countPrunableRate({ atOrBeforeMs: T0 + 10 })).toBe(1);
    // Oldest first within a grant: the row left of grant b is its newest.
    expect(await acme.countPrunableRate({ atOrBeforeMs: T0 + 3 })).toBe(0);
    const second = await acme.pruneRate({ atOrBeforeMs: T0 + 10, limit: 3, atMs: T0 + 40 * DAY_MS, by: OPS });
    expect(second.dispatches).toBe(1);
  });
});
