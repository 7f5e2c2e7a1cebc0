import { runCommonRouteTests, type RouteCase } from './common-route-tests.js';
import { GRANT, type ServiceFixture } from './http-fixtures.js';

// Every authenticated route of the service runs the same security and input tests:
// the cases below only say what a valid request looks like and what state it needs.

const budget = { maxTokens: 1000, maxCallTokens: 100 };

async function admitted(fixture: ServiceFixture, run: string): Promise<void> {
  const pass = await fixture.plane.admit({ tenant: 'acme', run, budget });
  if (!pass.ok) throw new Error(`fixture admission refused: ${pass.message}`);
}

const ROUTE_CASES: readonly RouteCase[] = [
  {
    name: 'POST /v1/runs',
    access: 'runner',
    hasBody: true,
    okStatus: 200,
    request: { method: 'POST', url: '/v1/runs', payload: { tenant: 'acme', run: 'run-new', budget } },
    malformed: {
      request: { method: 'POST', url: '/v1/runs', payload: { tenant: 'acme', budget: { maxTokens: 'lots' } } },
      field: 'budget.maxTokens',
    },
  },
  {
    name: 'POST /v1/runs/{run}/settle',
    access: 'runner',
    hasBody: true,
    okStatus: 200,
    prepare: async (fixture) => {
      await admitted(fixture, 'run-a');
      return { runs: ['run-a'] };
    },
    request: {
      method: 'POST',
      url: '/v1/runs/run-a/settle',
      payload: { tenant: 'acme', epoch: 1, spend: { tokens: 10, minorUnits: 0 }, concludes: true },
    },
    malformed: {
      request: {
        method: 'POST',
        url: '/v1/runs/run-a/settle',
        payload: { tenant: 'acme', epoch: 1, spend: { tokens: -1, minorUnits: 0 }, concludes: true },
      },
      field: 'spend.tokens',
    },
  },
  {
    name: 'POST /v1/runs/{run}/resume',
    access: 'runner',
    hasBody: true,
    okStatus: 200,
    prepare: async (fixture) => {
      await admitted(fixture, 'run-a');
      await fixture.plane.settle({ tenant: 'acme', run: 'run-a', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: false });
      return { runs: ['run-a'] };
    },
    request: { method: 'POST', url: '/v1/runs/run-a/resume', payload: { tenant: 'acme' } },
    malformed: { request: { method: 'POST', url: '/v1/runs/run-a/resume', payload: { tenant: 'acme', leaseMs: 86_400_001 } }, field: 'leaseMs' },
  },
  {
    name: 'POST /v1/runs/{run}/dispatches',
    access: 'runner',
    hasBody: true,
    okStatus: 200,
    prepare: async (fixture) => {
      await admitted(fixture, 'run-a');
      return { runs: ['run-a'] };
    },
    request: {
      method: 'POST',
      url: '/v1/runs/run-a/dispatches',
      payload: { tenant: 'acme', grant: GRANT, dispatch: 'd-1', ceilings: [{ count: 5, windowSeconds: 60 }] },
    },
    malformed: {
      request: { method: 'POST', url: '/v1/runs/run-a/dispatches', payload: { tenant: 'acme', grant: GRANT, dispatch: 'd-1', ceilings: 'five per minute' } },
      field: 'ceilings',
    },
  },
  {
    name: 'POST /v1/runs/{run}/dispatches with epoch (renews the lease)',
    access: 'runner',
    hasBody: true,
    okStatus: 200,
    prepare: async (fixture) => {
      await admitted(fixture, 'run-a');
      return { runs: ['run-a'] };
    },
    request: {
      method: 'POST',
      url: '/v1/runs/run-a/dispatches',
      payload: { tenant: 'acme', grant: GRANT, dispatch: 'd-1', ceilings: [], epoch: 1, leaseMs: 120_000 },
    },
    malformed: {
      request: { method: 'POST', url: '/v1/runs/run-a/dispatches', payload: { tenant: 'acme', grant: GRANT, dispatch: 'd-1', ceilings: [], epoch: 0 } },
      field: 'epoch',
    },
  },
  {
    name: 'POST /v1/runs/{run}/heartbeat',
    access: 'runner',
    hasBody: true,
    okStatus: 200,
    prepare: async (fixture) => {
      await admitted(fixture, 'run-a');
      return { runs: ['run-a'] };
    },
    request: { method: 'POST', url: '/v1/runs/run-a/heartbeat', payload: { tenant: 'acme', epoch: 1, leaseMs: 120_000 } },
    malformed: { request: { method: 'POST', url: '/v1/runs/run-a/heartbeat', payload: { tenant: 'acme', epoch: 0 } }, field: 'epoch' },
  },
  {
    name: 'GET /v1/usage',
    access: 'runner',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/usage?tenant=acme' },
    malformed: { request: { method: 'GET', url: '/v1/usage?tenant=acme&period=2026-13' }, field: 'period' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/usage',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/usage?period=2026-01' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/usage?period=last-month' }, field: 'period' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/quota',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/quota' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/quota?verbose=1' }, field: 'verbose' },
  },
  {
    name: 'PUT /v1/tenants/{tenant}/quota',
    access: 'operator',
    hasBody: true,
    okStatus: 200,
    request: { method: 'PUT', url: '/v1/tenants/acme/quota', payload: { maxConcurrentRuns: 2, period: 'daily' } },
    malformed: { request: { method: 'PUT', url: '/v1/tenants/acme/quota', payload: { period: 'weekly' } }, field: 'period' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/halts',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/halts' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/halts?state=gone' }, field: 'state' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/halts?state=lifted',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/halts?state=lifted&limit=10' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/halts?state=lifted&limit=0' }, field: 'limit' },
  },
  {
    name: 'POST /v1/tenants/{tenant}/halts',
    access: 'operator',
    hasBody: true,
    okStatus: 200,
    request: { method: 'POST', url: '/v1/tenants/acme/halts', payload: { scope: 'agent:refunder', reason: 'refund loop' } },
    malformed: { request: { method: 'POST', url: '/v1/tenants/acme/halts', payload: { scope: 'tenant' } }, field: 'reason' },
  },
  {
    name: 'POST /v1/tenants/{tenant}/halts/lift',
    access: 'operator',
    hasBody: true,
    okStatus: 200,
    prepare: async (fixture) => {
      await fixture.plane.halt({ tenant: 'acme', scope: 'agent:refunder', reason: 'refund loop', by: { actor: 'ops', basis: 'asserted' }, newTenant: true });
      return { runs: [] };
    },
    request: { method: 'POST', url: '/v1/tenants/acme/halts/lift', payload: { scope: 'agent:refunder' } },
    malformed: {
      request: { method: 'POST', url: '/v1/tenants/acme/halts/lift', payload: { scope: 'agent:refunder', reason: 'done' } },
      field: 'reason',
    },
  },
  {
    name: 'GET /v1/tenants/{tenant}/runs',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    prepare: async (fixture) => {
      await admitted(fixture, 'run-a');
      return { runs: ['run-a'] };
    },
    request: { method: 'GET', url: '/v1/tenants/acme/runs?limit=5' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/runs?limit=0' }, field: 'limit' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/runs?status=',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/runs?status=stranded,withheld&after=run-0&limit=5' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/runs?status=stranded,gone' }, field: 'status' },
  },
  {
    name: 'POST /v1/tenants/{tenant}/runs/{run}/settle',
    access: 'operator',
    hasBody: true,
    okStatus: 200,
    prepare: async (fixture) => {
      await admitted(fixture, 'run-a');
      return { runs: ['run-a'] };
    },
    request: {
      method: 'POST',
      url: '/v1/tenants/acme/runs/run-a/settle',
      payload: { epoch: 1, spend: { tokens: 10, minorUnits: 0 }, concludes: true },
    },
    malformed: {
      request: { method: 'POST', url: '/v1/tenants/acme/runs/run-a/settle', payload: { epoch: 1, spend: { tokens: 10 }, concludes: true } },
      field: 'spend.minorUnits',
    },
  },
  {
    name: 'POST /v1/tenants/{tenant}/runs/{run}/release',
    access: 'operator',
    hasBody: true,
    okStatus: 200,
    prepare: async (fixture) => {
      await admitted(fixture, 'run-a');
      return { runs: ['run-a'] };
    },
    request: { method: 'POST', url: '/v1/tenants/acme/runs/run-a/release', payload: {} },
    malformed: { request: { method: 'POST', url: '/v1/tenants/acme/runs/run-a/release', payload: { atMs: -1 } }, field: 'atMs' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/slots',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    prepare: async (fixture) => {
      await admitted(fixture, 'run-a');
      return { runs: ['run-a'] };
    },
    request: { method: 'GET', url: '/v1/tenants/acme/slots?limit=5' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/slots?limit=1001' }, field: 'limit' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/reservations',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/reservations' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/reservations?limit=many' }, field: 'limit' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/attention',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/attention?limit=5&holdStaleAfterMs=60000' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/attention?holdStaleAfterMs=-1' }, field: 'holdStaleAfterMs' },
  },
  {
    name: 'GET /v1/attention',
    access: 'operator',
    tenantScoped: false,
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/attention?limit=5' },
    malformed: { request: { method: 'GET', url: '/v1/attention?limit=0' }, field: 'limit' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/audit',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/audit?limit=5&action=halt' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/audit?action=' }, field: 'action' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/audit/verify',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/audit/verify' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/audit/verify?limit=5' }, field: 'limit' },
  },
  {
    name: 'POST /v1/sweep',
    access: 'operator',
    hasBody: true,
    okStatus: 200,
    prepare: async (fixture) => {
      const pass = await fixture.plane.admit({ tenant: 'acme', run: 'run-a', budget, leaseMs: 1000 });
      if (!pass.ok) throw new Error(`fixture admission refused: ${pass.message}`);
      fixture.clock.advance(2000);
      return { runs: ['run-a'] };
    },
    request: { method: 'POST', url: '/v1/sweep', payload: { tenant: 'acme' } },
    malformed: { request: { method: 'POST', url: '/v1/sweep', payload: { tenant: '' } }, field: 'tenant' },
  },
  {
    name: 'GET /v1/tenants',
    access: 'operator',
    tenantScoped: false,
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants' },
    malformed: { request: { method: 'GET', url: '/v1/tenants?prefix=a' }, field: 'prefix' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/spend',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/spend?periods=3' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/spend?periods=37' }, field: 'periods' },
  },
  {
    name: 'GET /v1/tenants/{tenant}/rates',
    access: 'operator',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/v1/tenants/acme/rates' },
    malformed: { request: { method: 'GET', url: '/v1/tenants/acme/rates?atMs=-1' }, field: 'atMs' },
  },
  {
    name: 'GET /metrics',
    access: 'operator-all-tenants',
    hasBody: false,
    okStatus: 200,
    request: { method: 'GET', url: '/metrics' },
  },
];

for (const route of ROUTE_CASES) runCommonRouteTests(route);
