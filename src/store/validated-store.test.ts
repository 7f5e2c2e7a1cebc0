import { describe, expect, it } from 'vitest';

import { QuotaError } from '../core/errors.js';
import { MAX_INSTANT_MS } from '../core/instant.js';
import { openStore } from './open-store.js';
import { SqliteTenantStore } from './sqlite/sqlite-tenant-store.js';
import { SqliteQuotaStore } from './sqlite/sqlite-store.js';
import type { QuotaStore, TenantStore } from './store.js';
import { MAX_LEASE_MS } from './store-arguments.js';
import { unvalidated, validated } from './validated-store.js';

// validated(): the port's one set of input rules in front of any store. A fake store records
// every call that reaches it, so a refused argument is seen to stop at the wrapper.

const DIGEST = 'ab'.repeat(32);
const AT_MS = Date.UTC(2026, 0, 5, 8);
const ADMISSION = { run: 'r1', budget: {}, width: 1, atMs: AT_MS, leaseMs: 1000 };

interface Recorded {
  readonly store: QuotaStore;
  readonly calls: { method: string; args: unknown[] }[];
}

// A store whose every method records its call and answers `{ ok: true }`; `omit` leaves optional members out.
function recordingStore(omit: readonly string[] = []): Recorded {
  const calls: { method: string; args: unknown[] }[] = [];
  const record =
    (method: string) =>
    async (...args: unknown[]) => {
      calls.push({ method, args });
      return { ok: true };
    };
  const handle = (tenant: string): TenantStore =>
    new Proxy({ tenant } as unknown as TenantStore, {
      get: (target, name) => (name === 'tenant' ? target.tenant : omit.includes(String(name)) ? undefined : record(String(name))),
    });
  const store = {
    backend: 'recording',
    tenant: (tenant: string) => {
      calls.push({ method: 'tenant', args: [tenant] });
      return handle(tenant);
    },
    tenants: async () => [],
    close: async () => {},
    ...Object.fromEntries(['hasTenant', 'auditChains', 'getPlaneCeiling', 'setPlaneCeiling', 'planeUsage', 'getPlaneHalt', 'setPlaneHalt', 'liftPlaneHaltIf', 'eventsAfter', 'newestEvents'].filter((name) => !omit.includes(name)).map((name) => [name, record(name)])),
  } as QuotaStore;
  return { store, calls };
}

async function fieldRefused(action: () => Promise<unknown>): Promise<string> {
  const error = await action().then(
    () => expect.unreachable('the argument was accepted'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(QuotaError);
  expect((error as QuotaError).code).toBe('INVALID_ARGUMENT');
  const field = String((error as QuotaError).details.field);
  // The message names the field first, then says what is expected and what came.
  expect((error as QuotaError).message).toMatch(new RegExp(`^${field.replace(/[.[\]]/g, '\\$&')}: (must|is) .*got `));
  return field;
}

describe('validated(store): the port with its input rules', () => {
  it('refuses an instant past MAX_INSTANT_MS at the store, as the plane does, and calls nothing', async () => {
    const { store, calls } = recordingStore();
    const acme = validated(store).tenant('acme');
    calls.length = 0;
    expect(await fieldRefused(() => acme.admit({ ...ADMISSION, atMs: MAX_INSTANT_MS + 1 }))).toBe('atMs');
    expect(await fieldRefused(() => acme.rateRoom('search', [], Number.MAX_SAFE_INTEGER))).toBe('atMs');
    expect(await fieldRefused(() => acme.sweepRun({ run: 'r1', atMs: MAX_INSTANT_MS + 1 }))).toBe('atMs');
    expect(await fieldRefused(() => acme.countPrunableRate({ atOrBeforeMs: MAX_INSTANT_MS + 1 }))).toBe('atOrBeforeMs');
    expect(calls).toEqual([]);
    await acme.admit({ ...ADMISSION, atMs: MAX_INSTANT_MS });
    expect(calls.map((call) => call.method)).toEqual(['admit']);
  });

  it('refuses an agent digest that is not 64 hex digits, naming agent.digest, and lowercases one that is', async () => {
    const { store, calls } = recordingStore();
    const acme = validated(store).tenant('acme');
    calls.length = 0;
    for (const digest of ['build-7', 'sha256:0', DIGEST.slice(1), `${DIGEST}0`]) {
      expect(await fieldRefused(() => acme.admit({ ...ADMISSION, agent: { name: 'clerk', digest } }))).toBe('agent.digest');
      expect(await fieldRefused(() => acme.admitOrWait({ ...ADMISSION, agent: { name: 'clerk', digest } }, { untilMs: AT_MS, leaseMs: 1 }))).toBe('agent.digest');
    }
    expect(calls).toEqual([]);
    await acme.admit({ ...ADMISSION, agent: { name: 'clerk', digest: DIGEST.toUpperCase() } });
    expect(calls[0]?.args[0]).toMatchObject({ agent: { name: 'clerk', digest: DIGEST } });
  });

  it('refuses a lease over MAX_LEASE_MS (24 hours) and a chain over 64 principals', async () => {
    const acme = validated(recordingStore().store).tenant('acme');
    expect(await fieldRefused(() => acme.heartbeat({ run: 'r1', epoch: 1, atMs: AT_MS, leaseMs: MAX_LEASE_MS + 1 }))).toBe('leaseMs');
    expect(await fieldRefused(() => acme.admit({ ...ADMISSION, chain: Array.from({ length: 65 }, (_, i) => `p${i}`) }))).toBe('chain');
  });

  it('names the bad member of every kind of argument', async () => {
    const validStore = validated(recordingStore().store);
    const acme = validStore.tenant('acme');
    expect(() => validStore.tenant(' acme')).toThrow(QuotaError);
    expect(await fieldRefused(() => acme.reserve({ run: '', quota: { period: 'monthly' }, atMs: AT_MS }))).toBe('run');
    expect(await fieldRefused(() => acme.carry('r1', '2026-13'))).toBe('period');
    expect(await fieldRefused(() => acme.reservations(0))).toBe('limit');
    expect(await fieldRefused(() => acme.liftHalt({ kind: 'revision', digest: 'abc' }))).toBe('scope.digest');
    expect(await fieldRefused(() => acme.settle({ run: 'r1', epoch: 0, period: null, spend: { tokens: 0, minorUnits: 0 }, releaseSlot: true, concludes: true }))).toBe('settlement.epoch');
    expect(await fieldRefused(() => acme.auditLog({ limit: 1, action: '' }))).toBe('action');
    expect(await fieldRefused(() => acme.waitQueue({ atMs: -1 }))).toBe('atMs');
    expect(await fieldRefused(() => acme.overranPasses({ limit: 0 }))).toBe('limit');
    expect(await fieldRefused(() => validStore.planeUsage!(['ok', '']))).toBe('agents[1]');
  });

  it('wraps every method a tenant handle has, so no port method reaches an adapter unchecked', () => {
    const wrapped = validated(recordingStore().store).tenant('acme') as unknown as Record<string, unknown>;
    const methods = Object.getOwnPropertyNames(SqliteTenantStore.prototype).filter((name) => name !== 'constructor');
    expect(methods.length).toBeGreaterThan(40);
    expect(methods.filter((name) => typeof wrapped[name] !== 'function')).toEqual([]);
    const storeMethods = Object.getOwnPropertyNames(SqliteQuotaStore.prototype).filter((name) => name !== 'constructor');
    const wrappedStore = validated(recordingStore().store) as unknown as Record<string, unknown>;
    expect(storeMethods.filter((name) => typeof wrappedStore[name] !== 'function' && name !== 'apiKeys' && name !== 'webhooks' && name !== 'callMeters' && name !== 'waiterWakes')).toEqual([]);
  });

  it('keeps optional members optional, is idempotent, and unvalidated() answers the store it wraps', () => {
    const { store } = recordingStore(['hasTenant', 'planeUsage', 'agentUsage']);
    const wrapped = validated(store);
    expect(wrapped.hasTenant).toBeUndefined();
    expect(wrapped.planeUsage).toBeUndefined();
    expect(wrapped.apiKeys).toBeUndefined();
    expect(wrapped.tenant('acme').agentUsage).toBeUndefined();
    expect(wrapped.getPlaneCeiling).toBeTypeOf('function');
    expect(validated(wrapped)).toBe(wrapped);
    expect(unvalidated(wrapped)).toBe(store);
    expect(unvalidated(store)).toBe(store);
    expect(wrapped.backend).toBe('recording');
  });
});

describe('where the rules apply once', () => {
  it('openStore answers a validated store: a direct user of the port is checked', async () => {
    const store = await openStore('sqlite::memory:');
    try {
      expect(unvalidated(store)).toBeInstanceOf(SqliteQuotaStore);
      const acme = store.tenant('acme');
      expect(await fieldRefused(() => acme.admit({ ...ADMISSION, atMs: MAX_INSTANT_MS + 1 }))).toBe('atMs');
      expect(await fieldRefused(() => acme.admit({ ...ADMISSION, agent: { name: 'clerk', digest: 'build-7' } }))).toBe('agent.digest');
      expect(await acme.getRun('r1')).toBeNull();
    } finally {
      await store.close();
    }
  });

});
