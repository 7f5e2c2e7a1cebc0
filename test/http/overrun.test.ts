import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { bearer, serviceFixture, type ServiceFixture } from './http-fixtures.js';

// An overrun is recorded whole, answered in the settle reply and counted in /metrics.

describe('overruns over HTTP', () => {
  let f: ServiceFixture;
  beforeEach(async () => {
    f = await serviceFixture();
  });
  afterEach(() => f.close());

  it('a run admitted with maxTokens 20000 that settles 90,000,000 answers its overrun and /metrics counts it once', async () => {
    await f.plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 2_000_000 }, { newTenant: true });
    const runner = bearer(f.key.runAcme);
    const admitted = await f.app.inject({
      method: 'POST',
      url: '/v1/runs',
      payload: { run: 'big', budget: { maxTokens: 20_000, maxCallTokens: 0 } },
      headers: runner,
    });
    expect(admitted.statusCode).toBe(200);
    const settle = { epoch: 1, spend: { tokens: 90_000_000, minorUnits: 0 }, concludes: true };
    const settled = await f.app.inject({ method: 'POST', url: '/v1/runs/big/settle', payload: settle, headers: runner });
    expect(settled.statusCode).toBe(200);
    expect(settled.json()).toMatchObject({ outcome: 'settled', overrun: { tokens: 89_980_000, minorUnits: 0 } });
    const retried = await f.app.inject({ method: 'POST', url: '/v1/runs/big/settle', payload: settle, headers: runner });
    expect(retried.json()).toMatchObject({ outcome: 'already-settled', overrun: { tokens: 89_980_000, minorUnits: 0 } });

    const metrics = (await f.app.inject({ method: 'GET', url: '/metrics', headers: bearer(f.key.opAll) })).body;
    expect(metrics).toContain('quotaplane_overruns_total{unit="tokens"} 1');
    expect(metrics).toContain('quotaplane_overruns_total{unit="minor_units"} 0');
  });
});
