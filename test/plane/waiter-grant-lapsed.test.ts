import { afterEach, beforeEach, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import type { AdmitRequest } from '../../src/store/types.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { openFreshStore } from '../postgres/pg-test-support.js';
import { describeOn, type TestBackend } from '../test-backends.js';
import { T0 } from './plane-fixtures.js';

// A waiting admission granted while its caller is away (a long GC pause, a starved CPU) for longer
// than the grant's lease: the grant is withdrawn whole (slot and hold given back at once) and the
// waiter stands again in its own place in the queue (docs/design/decisions.md "Waiting for a
// slot"), so the caller, when it comes back, is served afresh: never told to settle a pass it never
// received.

const TENANT = 'wgl-acme';
const BY = { actor: 'ops', basis: 'asserted' } as const;
const QUOTA = { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 1_000 } as const;
const BUDGET = { maxTokens: 100, maxCallTokens: 10 };
const HOLD = 110;
const request = (run: string, atMs: number, leaseMs = 1_000): AdmitRequest => ({ run, budget: BUDGET, width: 1, atMs, leaseMs });
// The caller's wait: a minute, its place kept 10 s from its last look.
const TERMS = { untilMs: T0 + 60_000, leaseMs: 10_000 };

const BACKENDS: readonly { name: TestBackend; open: () => Promise<{ store: QuotaStore; close: () => Promise<void> }> }[] = [
  {
    name: 'sqlite',
    open: async () => {
      const store = await openStore('sqlite::memory:');
      return { store, close: () => store.close() };
    },
  },
  { name: 'postgres', open: () => openFreshStore('waiter_lapsed') },
];

for (const backend of BACKENDS) {
  describeOn(backend.name, `${backend.name}: a waiter whose grant lapsed while it was away`, () => {
    let store: QuotaStore;
    let close: () => Promise<void>;
    let handle: TenantStore;
    let plane: Plane;
    const clock = new ManualClock(T0);

    // r1 runs; r2 waits; r1 concludes at T0 + 100 and r2 is granted, lease until T0 + 1 100,
    // while r2's caller is away.
    beforeEach(async () => {
      clock.set(T0);
      ({ store, close } = await backend.open());
      handle = store.tenant(TENANT);
      plane = createPlane({ store, clock });
      await handle.setQuota(QUOTA, { atMs: T0, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
      expect(await handle.admit(request('r1', T0, 60_000))).toMatchObject({ ok: true });
      expect(await handle.admitOrWait(request('r2', T0 + 10), TERMS)).toMatchObject({ waiting: true, position: 1 });
      await handle.settlePass({ run: 'r1', epoch: 1, spend: { tokens: 5, minorUnits: 0 }, concludes: true, atMs: T0 + 100 });
      expect(await handle.runningRuns(10)).toEqual(['r2']);
    });

    afterEach(async () => {
      await close();
    });

    it('a sweep does not strand the grant: it is withdrawn and the waiter, back in its place, is granted afresh; its caller collects a live pass', async () => {
      clock.set(T0 + 5_000);
      const swept = await plane.sweep({ tenant: TENANT });
      expect(swept.swept).toEqual([{ tenant: TENANT, run: 'r2', releasedSlot: true, stranded: false }]);
      // Granted again in the sweep's own transaction, from the sweep's instant.
      expect(await handle.runs({ limit: 10 })).toMatchObject([
        { run: 'r1', status: 'concluded' },
        { run: 'r2', status: 'running', admittedAtMs: T0 + 5_000, leaseExpiresAtMs: T0 + 6_000, holdsSlot: true },
      ]);
      expect(await handle.reservations(10)).toEqual([{ run: 'r2', period: '2026-01', remaining: { tokens: HOLD, minorUnits: 0 } }]);
      expect((await plane.attention({ tenant: TENANT })).conditions).toEqual([]);

      const collected = await handle.collectWaiter(request('r2', T0 + 5_500), TERMS);
      expect(collected).toEqual({ ok: true, run: 'r2', epoch: 1, period: '2026-01', hold: { tokens: HOLD, minorUnits: 0 }, leaseExpiresAtMs: T0 + 6_000 });
    });

    it('a caller that comes back after its grant lapsed, before any sweep, is served afresh, not told to settle a pass it never had', async () => {
      const collected = await handle.collectWaiter(request('r2', T0 + 7_000), TERMS);
      expect(collected).toEqual({ ok: true, run: 'r2', epoch: 1, period: '2026-01', hold: { tokens: HOLD, minorUnits: 0 }, leaseExpiresAtMs: T0 + 8_000 });
      expect(await handle.runs({ limit: 10 })).toMatchObject([
        { run: 'r1', status: 'concluded' },
        { run: 'r2', status: 'running', admittedAtMs: T0 + 7_000 },
      ]);
      expect(await handle.waitQueue({ atMs: T0 + 7_000 })).toEqual({ depth: 0, oldestEnqueuedAtMs: null, uncollected: 0 });
    });
  });
}
