import { describe, expect, it } from 'vitest';

import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import { createMemoryApiKeyStore } from '../../src/store/memory-api-keys.js';
import { openStore } from '../../src/store/open-store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { bearer, makeKey, T0 } from './http-fixtures.js';

describe('POST /v1/tenants/{tenant}/delete with API keys kept apart from the store', () => {
  it("L95.5: the tenant's own keys stop authenticating too, and are named in keysDeleted; other keys stay", async () => {
    const store = await openStore('sqlite::memory:');
    const keys = createMemoryApiKeyStore();
    const clock = new ManualClock(T0);
    const plane = createPlane({ store, clock });
    const app = await buildApp({ plane, store, keys, clock });
    try {
      const opAll = await makeKey(keys, 'operator', '*', 'ops-all');
      const runAcme = await makeKey(keys, 'runner', 'acme', 'acme-runner');
      const runGlobex = await makeKey(keys, 'runner', 'globex', 'globex-runner');
      await plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1000 }, { newTenant: true });
      await plane.setQuota('globex', { period: 'monthly' }, { newTenant: true });

      const deleted = await app.inject({ method: 'POST', url: '/v1/tenants/acme/delete', headers: bearer(opAll), payload: { reason: 'left' } });
      expect(deleted.statusCode).toBe(200);
      expect(deleted.json()).toMatchObject({ tenant: 'acme', keysDeleted: [runAcme.record.id] });

      // The deleted tenant's runner key would otherwise admit into it again, with no quota.
      const admit = await app.inject({ method: 'POST', url: '/v1/runs', headers: bearer(runAcme), payload: { run: 'r1', budget: { maxTokens: 10, maxCallTokens: 10 } } });
      expect(admit.statusCode).toBe(401);
      expect(await plane.tenants()).toEqual(['globex']);
      const other = await app.inject({ method: 'POST', url: '/v1/runs', headers: bearer(runGlobex), payload: { run: 'r1' } });
      expect(other.statusCode).toBe(200);
    } finally {
      await app.close();
      await store.close();
    }
  });
});
