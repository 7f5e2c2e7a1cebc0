import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { mintApiKey } from '../../src/http/api-key-secret.js';
import { storeApiKeyAdmin } from '../../src/plane/api-key-admin.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { BACKENDS, type SharedStore } from './backends.js';
import { ALICE, T0 } from './plane-fixtures.js';

// A write naming a tenant that does not exist (rules.md#l95): refused, with the nearest known
// tenant suggested, writing nothing, unless the caller says the tenant is new.

const DIGEST = 'ab'.repeat(32);
const RUN = 'run_01JB0000000000000000000000';

async function rejection(promise: Promise<unknown>): Promise<QuotaError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(QuotaError);
  return error as QuotaError;
}

describe.each(BACKENDS)('tenants that do not exist, on $name', ({ fresh }) => {
  let shared: SharedStore;
  let store: QuotaStore;
  let plane: Plane;

  beforeEach(async () => {
    shared = await fresh('known-tenant');
    store = await openStore(shared.url, shared.options);
    plane = createPlane({ store, clock: new ManualClock(T0) });
    await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 4 }, { by: ALICE, newTenant: true });
  });

  afterEach(async () => {
    await store.close();
    await shared.remove();
  });

  const keys = () => {
    const apiKeys = store.apiKeys?.();
    if (apiKeys === undefined) throw new Error('the store keeps API keys');
    return storeApiKeyAdmin({ store, keys: apiKeys, by: ALICE, mint: mintApiKey, nowMs: () => T0 });
  };

  it("L95.1 a halt of any scope, a lift, a quota set or change, a key or a release naming 'acmee' is NOT_FOUND suggesting 'acme', and writes nothing", async () => {
    const auditBefore = await store.tenant('acme').auditLog({ limit: 100 });
    const acts = [
      ['halt', () => plane.halt({ tenant: 'acmee', scope: 'tenant', reason: 'incident 42', by: ALICE })],
      ['halt', () => plane.halt({ tenant: 'acmee', scope: 'agent:refund-bot', reason: 'looping', by: ALICE })],
      ['halt', () => plane.halt({ tenant: 'acmee', scope: `revision:${DIGEST}`, reason: 'bad deploy', by: ALICE })],
      ['halt', () => plane.halt({ tenant: 'acmee', scope: 'subject:alice', reason: 'leaked token', by: ALICE })],
      ['lift', () => plane.lift({ tenant: 'acmee', scope: 'tenant', by: ALICE })],
      ['quota', () => plane.setQuota('acmee', { period: 'monthly', maxConcurrentRuns: 0 }, ALICE)],
      ['quota', () => plane.updateQuota('acmee', { maxConcurrentRuns: 0 }, { by: ALICE })],
      ['key', () => keys().create({ tenant: 'acmee', role: 'runner' })],
      ['release', () => plane.release({ tenant: 'acmee', run: RUN, by: ALICE })],
    ] as const;
    for (const [act, call] of acts) {
      const error = await rejection(call());
      expect(error.code, act).toBe('NOT_FOUND');
      expect(error.details, act).toEqual({ field: 'tenant', tenant: 'acmee', act, suggestion: 'acme' });
      expect(error.message, act).toContain("tenant 'acmee' does not exist: it has no quota and no history");
      expect(error.message, act).toContain("did you mean 'acme'?");
      if (act === 'lift' || act === 'release') expect(error.message, act).not.toContain('newTenant');
      else expect(error.message, act).toContain("pass newTenant: true to create 'acmee'");
    }

    expect(await plane.tenants()).toEqual(['acme']);
    expect(await store.hasTenant?.('acmee')).toBe(false);
    expect(await store.tenant('acmee').auditLog({ limit: 100 })).toEqual([]);
    expect(await store.tenant('acmee').halts()).toEqual([]);
    expect(await store.tenant('acmee').getQuota()).toBeNull();
    expect((await store.apiKeys?.().list())?.map((key) => key.tenant)).toEqual([]);
    expect(await store.tenant('acme').auditLog({ limit: 100 })).toEqual(auditBefore);
    // The typo stopped nothing it named: acme itself was never halted.
    expect((await plane.admit({ tenant: 'acme' })).ok).toBe(true);
  });

  it('L95.1 with no known tenant near the name, nothing is suggested', async () => {
    const error = await rejection(plane.halt({ tenant: 'umbrella', scope: 'tenant', reason: 'x', by: ALICE }));
    expect(error.details).toEqual({ field: 'tenant', tenant: 'umbrella', act: 'halt' });
    expect(error.message).toContain('no known tenant has a name near it');
  });

  it('L95.2 said to be new, a halt, a quota set, a quota change and a key each create their tenant, which exists from then on', async () => {
    await plane.halt({ tenant: 'globex', scope: 'tenant', reason: 'onboarding', by: ALICE, newTenant: true });
    await plane.setQuota('initech', { period: 'daily', maxConcurrentRuns: 2 }, { by: ALICE, newTenant: true });
    await plane.updateQuota('umbrella', { maxConcurrentRuns: 3 }, { newTenant: true });
    await keys().create({ tenant: 'hooli', role: 'runner', newTenant: true });
    expect(await plane.tenants()).toEqual(['acme', 'globex', 'hooli', 'initech', 'umbrella']);
    for (const tenant of ['globex', 'hooli', 'initech', 'umbrella']) expect(await store.hasTenant?.(tenant), tenant).toBe(true);

    // From then on no act needs to say so, and a lift finds what stands.
    await plane.setQuota('globex', { period: 'monthly' }, ALICE);
    await plane.halt({ tenant: 'hooli', scope: 'agent:refund-bot', reason: 'looping', by: ALICE });
    expect(await plane.lift({ tenant: 'globex', scope: 'tenant', by: ALICE })).toEqual({ wasStanding: true, removed: true });
    // Saying a known tenant is new is harmless.
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'incident 42', by: ALICE, newTenant: true });
    expect((await plane.halts('acme')).map((halt) => halt.reason)).toEqual(['incident 42']);
  });

  it('refuses a newTenant that is not a boolean, and an option that is not one, naming it', async () => {
    const notBoolean = await rejection(plane.halt({ tenant: 'globex', scope: 'tenant', reason: 'x', by: ALICE, newTenant: 'yes' as never }));
    expect(notBoolean.details.field).toBe('newTenant');
    const misspelt = await rejection(plane.setQuota('globex', { period: 'monthly' }, { newTennant: true } as never));
    expect(misspelt.details.field).toBe('newTennant');
    expect(await plane.tenants()).toEqual(['acme']);
  });
});
