import { describe, expect, it } from 'vitest';

import { MAX_INSTANT_MS } from '../../src/core/instant.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import { validated } from '../../src/store/validated-store.js';

// Validation, once (docs/design/architecture.md): the plane checks its callers' input with the
// port's own rules, so over a validated() store it calls the adapter underneath directly.

const DIGEST = 'ab'.repeat(32);
const AT_MS = Date.UTC(2026, 0, 5, 8);

// A store whose tenant handles record every call and answer `{ ok: true }` (a pass for admit).
function recordingStore(): { store: QuotaStore; calls: { method: string; args: unknown[] }[] } {
  const calls: { method: string; args: unknown[] }[] = [];
  const handle = (tenant: string): TenantStore =>
    new Proxy({ tenant } as unknown as TenantStore, {
      get: (target, name) =>
        name === 'tenant'
          ? target.tenant
          : async (...args: unknown[]) => {
              calls.push({ method: String(name), args });
              return { ok: true, run: 'r1', epoch: 1, period: '2026-01', hold: null, leaseExpiresAtMs: AT_MS + 60_000 };
            },
    });
  const store = { backend: 'recording', tenant: handle, tenants: async () => [], close: async () => {} } as QuotaStore;
  return { store, calls };
}

describe('the plane over a validated store', () => {
  it('a plane over a validated store calls the adapter underneath with its own checked request (no second pass)', async () => {
    const { store, calls } = recordingStore();
    const plane = createPlane({ store: validated(store), clock: { nowMs: () => AT_MS } });
    await plane.admit({ tenant: 'acme', run: 'r1', budget: {}, agent: { name: 'clerk', digest: DIGEST.toUpperCase() } });
    const admitted = calls.find((call) => call.method === 'admit')?.args[0] as Record<string, unknown>;
    // The plane's own request object: validated() would have made a copy with every member, `quota` among them.
    expect(admitted).toMatchObject({ run: 'r1', agent: { name: 'clerk', digest: DIGEST } });
    expect('quota' in admitted).toBe(false);
    // The plane still refuses what the port refuses, by the same rule.
    await expect(plane.admit({ tenant: 'acme', budget: {}, atMs: MAX_INSTANT_MS + 1 })).rejects.toMatchObject({ details: { field: 'atMs' } });
  });
});
