import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import { failure } from '../plane/plane-fixtures.js';

// The SQLite adapter's run lifecycle and operator acts, called on the handle directly (no plane
// in front to refuse first): what each refusal names, and the branches only a direct call reaches
//.

const T0 = 1_760_000_000_000; // 2025-10-09T08:53:20Z
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

describe('what an unknown run or pass is refused with', () => {
  it('resume, dispatch and heartbeat of an unknown run are NOT_FOUND naming the tenant, the run and the verb', async () => {
    const resume = await failure(acme.resume({ run: 'ghost', atMs: T0, leaseMs: 1 }));
    expect([resume.code, resume.message, resume.details]).toEqual([
      'NOT_FOUND',
      "tenant 'acme' has no run 'ghost' to resume; admit it first",
      { tenant: 'acme', run: 'ghost' },
    ]);
    const dispatch = await failure(acme.dispatch({ run: 'ghost', grant: 'tool://x/y', dispatch: 'k', ceilings: [], exempt: false, atMs: T0 }));
    expect([dispatch.code, dispatch.message, dispatch.details]).toEqual([
      'NOT_FOUND',
      "tenant 'acme' has no run 'ghost' to dispatch; admit it first",
      { tenant: 'acme', run: 'ghost' },
    ]);
    const heartbeat = await failure(acme.heartbeat({ run: 'ghost', epoch: 1, atMs: T0, leaseMs: 1 }));
    expect([heartbeat.code, heartbeat.message, heartbeat.details]).toEqual([
      'NOT_FOUND',
      "tenant 'acme' has no run 'ghost' to heartbeat; admit it first",
      { tenant: 'acme', run: 'ghost' },
    ]);
  });

  it('settlePass of an unknown pass is NOT_FOUND naming the tenant, the run and the epoch', async () => {
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    const error = await failure(acme.settlePass({ run: 'r1', epoch: 3, spend: ZERO, concludes: true, atMs: T0 }));
    expect([error.code, error.message, error.details]).toEqual([
      'NOT_FOUND',
      "tenant 'acme' has no pass r1/3 to settle",
      { tenant: 'acme', run: 'r1', epoch: 3 },
    ]);
  });

  it('a closed run refuses resume, dispatch and heartbeat naming the verb', async () => {
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 60_000 });
    await acme.settlePass({ run: 'r1', epoch: 1, spend: ZERO, concludes: true, atMs: T0 });
    expect((await failure(acme.resume({ run: 'r1', atMs: T0, leaseMs: 1 }))).message).toContain('so it cannot resume;');
    expect(
      (await failure(acme.dispatch({ run: 'r1', grant: 'tool://x/y', dispatch: 'k', ceilings: [], exempt: false, atMs: T0 }))).message,
    ).toContain('so it cannot dispatch;');
    expect((await failure(acme.heartbeat({ run: 'r1', epoch: 1, atMs: T0, leaseMs: 1 }))).message).toContain('so it cannot heartbeat;');
  });

  it('a dispatch naming a settled pass of an open run is fenced with the dispatch verb', async () => {
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 60_000 });
    await acme.settlePass({ run: 'r1', epoch: 1, spend: ZERO, concludes: false, atMs: T0 });
    const error = await failure(
      acme.dispatch({ run: 'r1', grant: 'tool://x/y', dispatch: 'k', ceilings: [], exempt: false, atMs: T0, epoch: 1, leaseMs: 10 }),
    );
    expect(error.message).toBe('pass r1/1 has settled already, so it cannot dispatch; resume the run for a new pass');
  });
});

describe('dispatch and the run status', () => {
  it('a dispatch without a halt leaves the run running; with epoch and lease it renews the lease, without them it does not', async () => {
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1000 });
    const base = { run: 'r1', grant: 'tool://x/y', ceilings: [], exempt: false };
    expect(await acme.dispatch({ ...base, dispatch: 'k1', atMs: T0 + 10 })).toEqual({ ok: true });
    expect(await acme.getRun('r1')).toMatchObject({ status: 'running' });
    const [summary] = await acme.runs({ limit: 5 });
    expect(summary).toMatchObject({ run: 'r1', status: 'running', leaseExpiresAtMs: T0 + 1000 });
    expect(await acme.dispatch({ ...base, dispatch: 'k2', atMs: T0 + 20, epoch: 1, leaseMs: 5000 })).toEqual({ ok: true });
    expect((await acme.runs({ limit: 5 }))[0]).toMatchObject({ status: 'running', leaseExpiresAtMs: T0 + 5020 });
  });
});

describe('a pass hold in minor units', () => {
  it('is kept with the pass, so a settlement over it reports the overrun in minor units', async () => {
    const quota = { period: 'monthly' as const, maxMinorUnitsPerPeriod: 10_000 };
    const grant = await acme.admit({ run: 'r1', budget: { maxMinorUnits: 300, maxCallMinorUnits: 100 }, width: 1, atMs: T0, leaseMs: 1, quota });
    expect(grant).toMatchObject({ ok: true, hold: { tokens: 0, minorUnits: 400 } });
    const settled = await acme.settlePass({ run: 'r1', epoch: 1, spend: { tokens: 5, minorUnits: 450 }, concludes: true, atMs: T0 });
    expect(settled.outcome).toBe('settled');
    expect(settled.overrun).toEqual({ tokens: 0, minorUnits: 50 });
  });
});

describe('SQLite releaseRun', () => {
  it('an unknown run with nothing held is NOT_FOUND naming the tenant and the run', async () => {
    const error = await failure(acme.releaseRun({ run: 'ghost', atMs: T0, by: OPS }));
    expect([error.code, error.message, error.details]).toEqual([
      'NOT_FOUND',
      "tenant 'acme' has no run 'ghost' and nothing held under that id to release",
      { tenant: 'acme', run: 'ghost' },
    ]);
    expect(await acme.auditLog({ limit: 5 })).toEqual([]);
  });

  it('releases a slot or a hold reserved under an id no run was admitted with', async () => {
    // A slot only (a concurrency ceiling, no hold), a hold only (no concurrency ceiling), and both.
    await acme.reserve({ run: 'slot-only', quota: { period: 'monthly', maxConcurrentRuns: 5 }, atMs: T0 });
    const hold = { period: '2025-10', amount: { tokens: 7, minorUnits: 0 } };
    await acme.reserve({ run: 'hold-only', quota: { period: 'monthly', maxTokensPerPeriod: 100 }, hold, atMs: T0 });
    expect(await acme.running()).toBe(2);
    for (const run of ['slot-only', 'hold-only']) {
      const released = await acme.releaseRun({ run, atMs: T0 + 1, by: OPS });
      expect(released).toMatchObject({ outcome: 'released', run, previousStatus: null, slotReleased: true });
    }
    expect(await acme.running()).toBe(0);
    expect(await acme.reserved('2025-10')).toEqual(ZERO);
  });

  it('releases a paused run that holds neither a slot nor spend, marking it released', async () => {
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    await acme.settlePass({ run: 'r1', epoch: 1, spend: ZERO, concludes: false, atMs: T0 });
    expect(await acme.getRun('r1')).toMatchObject({ status: 'paused' });
    expect(await acme.releaseRun({ run: 'r1', atMs: T0 + 1, by: OPS })).toMatchObject({
      outcome: 'released',
      previousStatus: 'paused',
      slotReleased: false,
      holdReleased: null,
    });
    expect(await acme.getRun('r1')).toMatchObject({ status: 'released' });
    expect(await acme.releaseRun({ run: 'r1', atMs: T0 + 2, by: OPS })).toMatchObject({ outcome: 'already-closed', previousStatus: 'released' });
  });
});

describe('SQLite operator listings', () => {
  it('the first page starts before every run id, upper-case ones included', async () => {
    for (const run of ['Alpha', 'Beta', 'zeta']) await acme.admit({ run, budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    expect((await acme.runs({ limit: 10 })).map((summary) => summary.run)).toEqual(['Alpha', 'Beta', 'zeta']);
    expect((await acme.runs({ limit: 10, statuses: ['running'] })).map((summary) => summary.run)).toEqual(['Alpha', 'Beta', 'zeta']);
    expect(await acme.lapsedRuns({ atMs: T0 + 10, limit: 10 })).toEqual(['Alpha', 'Beta', 'zeta']);
    expect(await acme.lapsedRuns({ atMs: T0 + 10, limit: 10, after: 'Alpha' })).toEqual(['Beta', 'zeta']);
  });

  it('an unsettled pass of a resumed run takes no slot; pass 1 does', async () => {
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    await acme.resume({ run: 'r1', atMs: T0 + 5, leaseMs: 1 });
    const passes = await acme.unsettledPasses({ atMs: T0 + 100, limit: 10 });
    expect(passes.map(({ run, epoch, takesSlot, startedAtMs, settledAtMs }) => ({ run, epoch, takesSlot, startedAtMs, settledAtMs }))).toEqual([
      { run: 'r1', epoch: 1, takesSlot: true, startedAtMs: T0, settledAtMs: null },
      { run: 'r1', epoch: 2, takesSlot: false, startedAtMs: T0 + 5, settledAtMs: null },
    ]);
  });
});

describe('SQLite rate judging after pruning', () => {
  it('a ceiling whose boundary dispatch was pruned has room (the window cannot reach back that far)', async () => {
    await acme.admit({ run: 'r1', budget: {}, width: 1, atMs: T0, leaseMs: 1 });
    const base = { run: 'r1', grant: 'tool://x/y', ceilings: [], exempt: false };
    await acme.dispatch({ ...base, dispatch: 'k1', atMs: T0 });
    // 32 days on, past the widest countable window: this dispatch prunes k1's row.
    const later = T0 + 32 * DAY_MS;
    await acme.dispatch({ ...base, dispatch: 'k2', atMs: later });
    expect(await acme.rateRoom('tool://x/y', [{ count: 2, windowSeconds: 60 }], later)).toEqual({ ok: true });
    expect(await acme.rateRoom('tool://x/y', [{ count: 1, windowSeconds: 60 }], later)).toMatchObject({
      ok: false,
      refusal: { code: 'RateLimited', reached: 1 },
    });
  });
});
