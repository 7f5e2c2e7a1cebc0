import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';

import { createServiceMetrics } from '../../src/http/metrics.js';
import { createTenantCounters, TenantLabels } from '../../src/http/tenant-counters.js';
import type { Plane } from '../../src/plane/plane.js';
import { bearer, serviceFixture, type ServiceFixture } from './http-fixtures.js';

// The per-tenant figures a platform team alerts on (spend-metrics.ts, tenant-counters.ts,
// sweep-metrics.ts): spend against ceilings per tenant and agent, admissions and refusals per
// tenant and code, and how far behind the sweep of lapsed leases is.

let f: ServiceFixture | undefined;
afterEach(async () => {
  await f?.close();
  f = undefined;
});

const AGENT = { name: 'bot', digest: 'ab'.repeat(32) };

async function scrape(fixture: ServiceFixture): Promise<string> {
  return (await fixture.app.inject({ method: 'GET', url: '/metrics', headers: bearer(fixture.key.opAll) })).body;
}

// Every sample of `metric` as `{labels}` → value.
function samples(text: string, metric: string): Record<string, number> {
  const found: Record<string, number> = {};
  for (const match of text.matchAll(new RegExp(`^${metric}(\\{[^}]*\\})? (\\S+)$`, 'gm'))) found[match[1] ?? ''] = Number(match[2]);
  return found;
}

describe('quotaplane_tenant_spend_* and quotaplane_tenant_agent_spend_*', () => {
  it("show settled and held spend of the current period and the ceilings, and no ceiling series for an unlimited unit", async () => {
    f = await serviceFixture();
    await f.plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1000, agents: { bot: { maxTokensPerPeriod: 400, maxMinorUnitsPerPeriod: 90 } } }, { newTenant: true });
    const first = await f.plane.admit({ tenant: 'acme', run: 'run-1', agent: AGENT, budget: { maxTokens: 300, maxCallTokens: 10, maxMinorUnits: 50, maxCallMinorUnits: 5 } });
    expect(first.ok).toBe(true);
    await f.plane.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 250, minorUnits: 20 }, concludes: true });
    await f.plane.admit({ tenant: 'acme', run: 'run-2', budget: { maxTokens: 500, maxCallTokens: 10 } });
    const text = await scrape(f);

    expect(samples(text, 'quotaplane_tenant_spend_settled')).toMatchObject({ '{tenant="acme",unit="tokens"}': 250, '{tenant="acme",unit="minor_units"}': 20 });
    // run-2 holds its budget plus one call's bound (the hold formula, width 1).
    expect(samples(text, 'quotaplane_tenant_spend_held')).toMatchObject({ '{tenant="acme",unit="tokens"}': 510, '{tenant="acme",unit="minor_units"}': 0 });
    // Minor units are unlimited for acme: no series, so a ratio against it is empty, never 0 or Inf.
    expect(samples(text, 'quotaplane_tenant_spend_ceiling')).toEqual({ '{tenant="acme",unit="tokens"}': 1000 });
    expect(samples(text, 'quotaplane_tenant_agent_spend_settled')).toEqual({
      '{tenant="acme",agent="bot",unit="tokens"}': 250,
      '{tenant="acme",agent="bot",unit="minor_units"}': 20,
    });
    expect(samples(text, 'quotaplane_tenant_agent_spend_ceiling')).toEqual({
      '{tenant="acme",agent="bot",unit="tokens"}': 400,
      '{tenant="acme",agent="bot",unit="minor_units"}': 90,
    });
    expect(text).toMatch(/# HELP quotaplane_tenant_spend_settled .*the 50 tenants nearest a spend ceiling/);
  });

  it('are bounded to the N tenants nearest a ceiling, even ones holding no slot, with no "other" series', async () => {
    f = await serviceFixture({ metricsTenants: 2 });
    for (let index = 0; index < 12; index += 1) {
      const tenant = `t-${String(index).padStart(2, '0')}`;
      await f.plane.setQuota(tenant, { period: 'monthly', maxTokensPerPeriod: 1000 }, { newTenant: true });
      // t-NN spends NN × 50 tokens, settled, so none of them holds a slot at the scrape.
      await f.plane.admit({ tenant, run: 'run-1', budget: { maxTokens: 600, maxCallTokens: 1 } });
      await f.plane.settle({ tenant, run: 'run-1', epoch: 1, spend: { tokens: index * 50, minorUnits: 0 }, concludes: true });
    }
    // A busy tenant with slots but no spend ceiling ranks after every tenant with one.
    await f.plane.admit({ tenant: 'busy', run: 'run-1' });
    const text = await scrape(f);
    expect(Object.keys(samples(text, 'quotaplane_tenant_spend_ceiling')).sort()).toEqual(['{tenant="t-10",unit="tokens"}', '{tenant="t-11",unit="tokens"}']);
    expect(samples(text, 'quotaplane_tenant_spend_settled')).toEqual({
      '{tenant="t-11",unit="tokens"}': 550,
      '{tenant="t-11",unit="minor_units"}': 0,
      '{tenant="t-10",unit="tokens"}': 500,
      '{tenant="t-10",unit="minor_units"}': 0,
    });
    // The slot-ranked gauges still show the busiest by slots.
    expect(samples(text, 'quotaplane_tenant_running_runs')).toMatchObject({ '{tenant="busy"}': 1 });
  });
});

describe('the cost of the per-tenant figures', () => {
  it('a scrape reads each tenant once for every per-tenant gauge together, and a decision reads nothing for them', async () => {
    f = await serviceFixture();
    await f.plane.setQuota('acme', { period: 'monthly', maxTokensPerPeriod: 1000 }, { newTenant: true });
    const reads = { tenants: 0, usage: 0 };
    const inner = f.plane;
    const counting: Plane = {
      ...inner,
      tenants: () => ((reads.tenants += 1), inner.tenants()),
      usage: (input) => ((reads.usage += 1), inner.usage(input)),
    };
    const metrics = createServiceMetrics({ plane: counting });
    const metered = metrics.meter(counting);
    await metered.admit({ tenant: 'acme', run: 'run-1', budget: { maxTokens: 10, maxCallTokens: 1 } });
    await metered.admit({ tenant: 'acme', run: 'run-2', budget: { maxTokens: 5000, maxCallTokens: 1 } });
    await metered.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: true });
    expect(reads).toEqual({ tenants: 0, usage: 0 });
    const tenants = (await inner.tenants()).length;
    const text = await metrics.registry.metrics();
    expect(reads).toEqual({ tenants: 1, usage: tenants });
    expect(samples(text, 'quotaplane_tenant_refusals_total')).toEqual({ '{tenant="acme",operation="admit",code="SpentOut"}': 1 });
    expect(samples(text, 'quotaplane_tenant_spend_settled')).toMatchObject({ '{tenant="acme",unit="tokens"}': 1 });
  });
});

describe('quotaplane_tenant_admissions_total and quotaplane_tenant_refusals_total', () => {
  it('count admissions and refusals per tenant and code over HTTP, beside the unchanged tenant-free counters', async () => {
    f = await serviceFixture();
    await f.plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
    const runner = bearer(f.key.runAcme);
    await f.app.inject({ method: 'POST', url: '/v1/runs', payload: { run: 'run-1' }, headers: runner });
    await f.app.inject({ method: 'POST', url: '/v1/runs', payload: { run: 'run-2' }, headers: runner });
    await f.app.inject({ method: 'POST', url: '/v1/runs', payload: { run: 'run-3' }, headers: runner });
    await f.app.inject({ method: 'POST', url: '/v1/runs', payload: { run: 'run-g' }, headers: bearer(f.key.runGlobex) });
    const text = await scrape(f);
    expect(samples(text, 'quotaplane_tenant_admissions_total')).toEqual({
      '{tenant="acme",outcome="admitted"}': 1,
      '{tenant="acme",outcome="refused"}': 2,
      '{tenant="globex",outcome="admitted"}': 1,
    });
    expect(samples(text, 'quotaplane_tenant_refusals_total')).toEqual({ '{tenant="acme",operation="admit",code="TooManyRuns"}': 2 });
    expect(samples(text, 'quotaplane_admissions_total')).toEqual({ '{outcome="admitted"}': 2, '{outcome="refused"}': 2 });
    expect(samples(text, 'quotaplane_refusals_total')).toEqual({ '{operation="admit",code="TooManyRuns"}': 2 });
  });

  it('keep the first N tenants by name for the life of the process and count every later one (and "other" itself) as other', () => {
    const labels = new TenantLabels(2, 'other');
    expect(['a', 'other', 'b', 'c', 'a', 'b', 'd'].map((tenant) => labels.of(tenant))).toEqual(['a', 'other', 'b', 'other', 'a', 'b', 'other']);

    const registry = new Registry();
    const counters = createTenantCounters(registry, 'quotaplane_', 2, 'other');
    for (let index = 0; index < 500; index += 1) counters.admission(`flood-${index}`, 'SpentOut');
    counters.refusedDispatch('flood-0', 'RateLimited');
    counters.refusedDispatch('flood-499', 'RateLimited');
    return registry.metrics().then((text) => {
      expect(samples(text, 'quotaplane_tenant_refusals_total')).toEqual({
        '{tenant="flood-0",operation="admit",code="SpentOut"}': 1,
        '{tenant="flood-1",operation="admit",code="SpentOut"}': 1,
        '{tenant="other",operation="admit",code="SpentOut"}': 498,
        '{tenant="flood-0",operation="dispatch",code="RateLimited"}': 1,
        '{tenant="other",operation="dispatch",code="RateLimited"}': 1,
      });
      expect(Object.keys(samples(text, 'quotaplane_tenant_admissions_total'))).toHaveLength(3);
    });
  });
});

describe('quotaplane_sweep_behind_seconds', () => {
  it('is absent before a sweep completed, then the seconds since the start of the last completed sweep', async () => {
    f = await serviceFixture();
    expect(await scrape(f)).not.toContain('quotaplane_sweep_behind_seconds');
    // A sweep that took 50 minutes began at least 3000 s ago.
    f.app.observeSweep({ durationMs: 3_000_000, lagBoundMs: null });
    const late = samples(await scrape(f), 'quotaplane_sweep_behind_seconds')[''] ?? Number.NaN;
    expect(late).toBeGreaterThanOrEqual(3000);
    expect(late).toBeLessThan(3060);
    f.app.observeSweep({ durationMs: 0, lagBoundMs: 10 });
    const fresh = samples(await scrape(f), 'quotaplane_sweep_behind_seconds')[''] ?? Number.NaN;
    expect(fresh).toBeGreaterThanOrEqual(0);
    expect(fresh).toBeLessThan(60);
  });
});
