import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createClient } from '../../src/client/create-client.js';
import { QuotaError } from '../../src/core/errors.js';
import { buildApp } from '../../src/http/build-app.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import { bearer, injectFetch, serviceFixture, type ServiceFixture } from '../http/http-fixtures.js';

// A decision the store sent but could not learn the outcome of (a SQLite COMMIT that failed with an
// I/O error, a PostgreSQL reply that never came): STORE_UNAVAILABLE with details.outcome 'unknown'.
// The library, the HTTP service and the client say it alike: over HTTP a 503 with Retry-After whose
// members `outcome` and `run` the client decodes back into details, so a caller of either surface
// knows to retry the same call (under the same run id, also one the plane made) rather than to
// take "unavailable" for "nothing was decided".

const BUDGET = { maxTokens: 10, maxCallTokens: 5 };

function unknownOutcome(backend: 'sqlite' | 'postgres'): QuotaError {
  return new QuotaError('STORE_UNAVAILABLE', `the ${backend} store sent this decision but its reply never came; retry the same call with the same payload`, {
    details: { backend, step: 'commit', outcome: 'unknown' },
  });
}

// The fixture's store, but admissions and settles fail as a decision whose reply never came.
function losingReplies(store: QuotaStore, backend: 'sqlite' | 'postgres'): QuotaStore {
  const losing = (handle: TenantStore): TenantStore =>
    new Proxy(handle, {
      get(target, property, receiver) {
        if (property === 'admit' || property === 'settlePass') return () => Promise.reject(unknownOutcome(backend));
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'tenant') return (tenant: string) => losing(target.tenant(tenant));
      const value = Reflect.get(target, property, receiver) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe.each(['sqlite', 'postgres'] as const)('an unknown outcome (as the %s store reports it), on every surface', (backend) => {
  let fixture: ServiceFixture;
  let plane: Plane;
  let fetch: typeof globalThis.fetch;

  beforeEach(async () => {
    fixture = await serviceFixture();
    plane = createPlane({ store: losingReplies(fixture.store, backend), clock: fixture.clock });
    const app = await buildApp({ plane, store: fixture.store, keys: fixture.keys, clock: fixture.clock });
    fetch = injectFetch(app);
  });
  afterEach(() => fixture.close());

  it('the plane names the run to retry under, also one it made', async () => {
    const named = await plane.admit({ tenant: 'acme', run: 'run-1', budget: BUDGET }).catch((caught: unknown) => caught);
    expect(named).toBeInstanceOf(QuotaError);
    expect((named as QuotaError).details).toEqual({ backend, step: 'commit', outcome: 'unknown', run: 'run-1' });
    const made = (await plane.admit({ tenant: 'acme', budget: BUDGET }).catch((caught: unknown) => caught)) as QuotaError;
    expect(made.details.run).toMatch(/^run_/);
    expect(made.message).toMatch(new RegExp(`retry the same call with the same payload; this admission's run id is '${String(made.details.run)}'$`));
    const settle = (await plane.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: true }).catch((caught: unknown) => caught)) as QuotaError;
    expect(settle.details).toEqual({ backend, step: 'commit', outcome: 'unknown' });
  });

  it('HTTP answers 503 with Retry-After and the members outcome and run; the client decodes them into the same details', async () => {
    const reply = await fetch('http://quotaplane.test/v1/runs', {
      method: 'POST',
      headers: { ...bearer(fixture.key.runAcme), 'content-type': 'application/json' },
      body: JSON.stringify({ tenant: 'acme', budget: BUDGET }),
    });
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toBe('2');
    const problem = (await reply.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ code: 'STORE_UNAVAILABLE', outcome: 'unknown', run: expect.stringMatching(/^run_/) });
    expect(problem.detail).toMatch(/retry the same call with the same payload; this admission's run id is 'run_/);
    expect(Object.keys(problem)).not.toContain('backend');

    const client = createClient({ url: 'http://quotaplane.test/', key: fixture.key.runAcme.secret, fetch });
    const admitted = (await client.admit({ tenant: 'acme', run: 'run-2', budget: BUDGET }).catch((caught: unknown) => caught)) as QuotaError;
    expect(admitted).toBeInstanceOf(QuotaError);
    expect({ code: admitted.code, retryable: admitted.retryable, outcome: admitted.details.outcome, run: admitted.details.run, status: admitted.details.status }).toEqual({
      code: 'STORE_UNAVAILABLE',
      retryable: true,
      outcome: 'unknown',
      run: 'run-2',
      status: 503,
    });
    const settled = (await client
      .settle({ tenant: 'acme', run: 'run-2', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: true })
      .catch((caught: unknown) => caught)) as QuotaError;
    expect({ code: settled.code, outcome: settled.details.outcome }).toEqual({ code: 'STORE_UNAVAILABLE', outcome: 'unknown' });
  });
});
