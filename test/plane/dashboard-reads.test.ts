import { afterEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import { memoryPlane, T0, type MemoryPlane } from './plane-fixtures.js';

// The plane's dashboard reads, `spendHistory` and `rateWindows`, on SQLite in this
// process. test/http/dashboard-reads.test.ts checks the same answers through the HTTP routes; these
// are here so `npm run mutate` (which runs no HTTP test) reaches the plane code.

const DAY_MS = 86_400_000;
const REFUND = 'tool://payments/refund';
const SEARCH = 'tool://search/web';
const WRITE = 'tool://write/file';
const budget = { maxTokens: 1000, maxCallTokens: 100, maxMinorUnits: 5000, maxCallMinorUnits: 500 };
const zero = { tokens: 0, minorUnits: 0 };

let fixture: MemoryPlane;
afterEach(async () => {
  await fixture.close();
});

/** The store with the tenant handle's methods in `override` answering instead of the real ones. */
function storeWith(store: QuotaStore, override: Partial<TenantStore>): QuotaStore {
  return {
    backend: store.backend,
    tenant: (tenant) => {
      const handle = store.tenant(tenant);
      return new Proxy(handle, {
        get: (target, property) => {
          if (property in override) return override[property as keyof TenantStore];
          const value = Reflect.get(target, property) as unknown;
          return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
    tenants: () => store.tenants(),
    close: () => store.close(),
  };
}

describe('plane.spendHistory', () => {
  it('answers settled and held spend per daily period, oldest first, ending with the period of atMs', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    await plane.setQuota('acme', { period: 'daily', maxTokensPerPeriod: 100_000, maxMinorUnitsPerPeriod: 1_000_000 }, { newTenant: true });
    const first = await plane.admit({ tenant: 'acme', run: 'run-1', budget });
    if (!first.ok) throw new Error(first.message);
    await plane.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 300, minorUnits: 40 }, concludes: true });
    clock.advance(2 * DAY_MS);
    const second = await plane.admit({ tenant: 'acme', run: 'run-2', budget });
    if (!second.ok || second.hold === null) throw new Error('run-2 was not admitted with a hold');

    expect(await plane.spendHistory({ tenant: 'acme', periods: 4 })).toEqual({
      tenant: 'acme',
      periodKind: 'daily',
      periods: [
        { period: '2026-01-04', spent: zero, reserved: zero },
        { period: '2026-01-05', spent: { tokens: 300, minorUnits: 40 }, reserved: zero },
        { period: '2026-01-06', spent: zero, reserved: zero },
        { period: '2026-01-07', spent: zero, reserved: second.hold },
      ],
      quota: { period: 'daily', maxTokensPerPeriod: 100_000, maxMinorUnitsPerPeriod: 1_000_000 },
    });
    // atMs names the last period instead of the clock.
    const earlier = await plane.spendHistory({ tenant: 'acme', periods: 1, atMs: T0 });
    expect(earlier.periods).toEqual([{ period: '2026-01-05', spent: { tokens: 300, minorUnits: 40 }, reserved: zero }]);
  });

  it('defaults to 12 monthly periods for a tenant without a quota', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    await plane.admit({ tenant: 'globex', run: 'run-g' });
    await plane.settle({ tenant: 'globex', run: 'run-g', epoch: 1, spend: { tokens: 7, minorUnits: 3 }, concludes: true });
    const history = await plane.spendHistory({ tenant: 'globex' });
    expect(history.tenant).toBe('globex');
    expect(history.periodKind).toBe('monthly');
    expect(history.quota).toBeNull();
    expect(history.periods.map((row) => row.period)).toEqual([
      '2025-02', '2025-03', '2025-04', '2025-05', '2025-06', '2025-07', '2025-08', '2025-09', '2025-10', '2025-11', '2025-12', '2026-01',
    ]);
    expect(history.periods.at(-1)).toEqual({ period: '2026-01', spent: { tokens: 7, minorUnits: 3 }, reserved: zero });
  });

  it('refuses a bad request, tenant or period count, naming the field', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    const field = async (input: unknown) => {
      const error = await plane.spendHistory(input as never).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(QuotaError);
      expect((error as QuotaError).code).toBe('INVALID_ARGUMENT');
      return (error as QuotaError).details.field;
    };
    expect(await field(null)).toBe('request');
    expect(await field({ tenant: '*' })).toBe('tenant');
    expect(await field({ tenant: 'acme', periods: 0 })).toBe('periods');
    expect(await field({ tenant: 'acme', periods: 37 })).toBe('periods');
  });

  it('lets a store fault through as STORE_UNAVAILABLE naming the read', async () => {
    fixture = await memoryPlane();
    for (const [method, operation] of [
      ['getQuota', 'getQuota'],
      ['spent', 'spent'],
      ['reserved', 'reserved'],
    ] as const) {
      const store = storeWith(fixture.store, { [method]: async () => Promise.reject(new Error('disk gone')) });
      const plane = createPlane({ store, clock: fixture.clock });
      const error = await plane.spendHistory({ tenant: 'acme', periods: 1 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(QuotaError);
      expect((error as QuotaError).code).toBe('STORE_UNAVAILABLE');
      expect((error as QuotaError).details).toEqual({ operation });
    }
  });
});

describe('plane.rateWindows', () => {
  it('answers each configured ceiling with the dispatches its window holds now, grants in order', async () => {
    fixture = await memoryPlane();
    const { plane, clock } = fixture;
    // Grants given out of order: the answer sorts them.
    await plane.setQuota('acme', {
      period: 'monthly',
      rateCeilings: { [SEARCH]: [{ count: 9, windowSeconds: 10 }], [REFUND]: [{ count: 5, windowSeconds: 60 }, { count: 50, windowSeconds: 3600 }] },
    }, { newTenant: true });
    const pass = await plane.admit({ tenant: 'acme', run: 'run-r' });
    if (!pass.ok) throw new Error(pass.message);
    for (const dispatch of ['d-1', 'd-2', 'd-3']) {
      expect(await plane.dispatch({ tenant: 'acme', run: 'run-r', grant: REFUND, dispatch, ceilings: [] })).toEqual({ ok: true });
    }
    clock.advance(120_000); // the three leave the 60 s window and stay in the hour
    expect(await plane.dispatch({ tenant: 'acme', run: 'run-r', grant: REFUND, dispatch: 'd-4', ceilings: [] })).toEqual({ ok: true });

    expect(await plane.rateWindows({ tenant: 'acme' })).toEqual({
      tenant: 'acme',
      atMs: T0 + 120_000,
      windows: [
        { grant: REFUND, ceiling: { count: 5, windowSeconds: 60 }, counted: 1 },
        { grant: REFUND, ceiling: { count: 50, windowSeconds: 3600 }, counted: 4 },
        { grant: SEARCH, ceiling: { count: 9, windowSeconds: 10 }, counted: 0 },
      ],
    });
    // atMs moves the windows' end: an hour after the first three, only d-4 is in the hour and none in the minute.
    const later = T0 + 3_600_000 + 60_000;
    expect(await plane.rateWindows({ tenant: 'acme', atMs: later })).toEqual({
      tenant: 'acme',
      atMs: later,
      windows: [
        { grant: REFUND, ceiling: { count: 5, windowSeconds: 60 }, counted: 0 },
        { grant: REFUND, ceiling: { count: 50, windowSeconds: 3600 }, counted: 1 },
        { grant: SEARCH, ceiling: { count: 9, windowSeconds: 10 }, counted: 0 },
      ],
    });
  });

  it('answers no windows for a tenant without a quota or without configured ceilings', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    expect(await plane.rateWindows({ tenant: 'acme' })).toEqual({ tenant: 'acme', atMs: T0, windows: [] });
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 2 }, { newTenant: true });
    expect(await plane.rateWindows({ tenant: 'acme' })).toEqual({ tenant: 'acme', atMs: T0, windows: [] });
  });

  it('answers counted null for a stored window no store can count, without asking the store, and for a refusal other than RateLimited', async () => {
    fixture = await memoryPlane();
    const asked: unknown[] = [];
    const store = storeWith(fixture.store, {
      // Grants out of order, as a store might answer them: the windows come sorted by grant.
      getQuota: async () => ({
        period: 'monthly',
        rateCeilings: { [SEARCH]: [{ count: 4, windowSeconds: 60 }], [REFUND]: [{ count: 3, windowSeconds: 0 }], [WRITE]: [{ count: 5, windowSeconds: 0 }] },
      }),
      rateRoom: async (grant: string, ceilings: unknown) => {
        asked.push([grant, ceilings]);
        return { ok: false, refusal: { code: 'UncountableRate', grant, ceiling: { count: 1, windowSeconds: 60 } } } as never;
      },
    });
    const plane = createPlane({ store, clock: fixture.clock });
    expect(await plane.rateWindows({ tenant: 'acme' })).toEqual({
      tenant: 'acme',
      atMs: T0,
      windows: [
        { grant: REFUND, ceiling: { count: 3, windowSeconds: 0 }, counted: null },
        { grant: SEARCH, ceiling: { count: 4, windowSeconds: 60 }, counted: null },
        { grant: WRITE, ceiling: { count: 5, windowSeconds: 0 }, counted: null },
      ],
    });
    // Only the countable window was asked about, with a probe of count 1 over the same window.
    expect(asked).toEqual([[SEARCH, [{ count: 1, windowSeconds: 60 }]]]);
  });

  it('refuses a bad request or tenant, and lets a store fault through naming the read', async () => {
    fixture = await memoryPlane();
    const { plane } = fixture;
    for (const [input, field] of [
      [undefined, 'request'],
      [{ tenant: '' }, 'tenant'],
      [{ tenant: 'acme', atMs: -1 }, 'atMs'],
    ] as const) {
      const error = await plane.rateWindows(input as never).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(QuotaError);
      expect((error as QuotaError).details.field).toBe(field);
    }
    await plane.setQuota('acme', { period: 'monthly', rateCeilings: { [REFUND]: [{ count: 5, windowSeconds: 60 }] } }, { newTenant: true });
    for (const method of ['getQuota', 'rateRoom'] as const) {
      const store = storeWith(fixture.store, { [method]: async () => Promise.reject(new Error('disk gone')) });
      const error = await createPlane({ store, clock: fixture.clock }).rateWindows({ tenant: 'acme' }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(QuotaError);
      expect((error as QuotaError).code).toBe('STORE_UNAVAILABLE');
      expect((error as QuotaError).details).toEqual({ operation: method });
    }
  });
});
