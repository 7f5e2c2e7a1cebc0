import { SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { TRACER_NAME } from '../../src/plane/tracing.js';
import { memoryPlane, type MemoryPlane } from './plane-fixtures.js';

// The plane's OpenTelemetry spans (tracing.ts): one per admit, settle and dispatch, with the tenant,
// run, outcome and refusal code, and status ERROR for a call that threw. The SDK is registered here
// only, as a host would; without one the API's no-op tracer answers (the package depends on the API alone).

const exporter = new InMemorySpanExporter();
let p: MemoryPlane;

beforeAll(async () => {
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  p = await memoryPlane();
});
afterAll(async () => {
  await p.close();
  trace.disable();
});
afterEach(() => exporter.reset());

const finished = () => exporter.getFinishedSpans().map((span) => ({ name: span.name, scope: span.instrumentationScope.name, attributes: span.attributes, status: span.status.code }));

describe('the plane traces admit, settle and dispatch', () => {
  it('an admission, a refusal, a dispatch refused and a settle each end one span with tenant, run, outcome and code', async () => {
    await p.plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1 }, { newTenant: true });
    expect(await p.plane.admit({ tenant: 'acme', run: 'run-1' })).toMatchObject({ ok: true });
    expect(await p.plane.admit({ tenant: 'acme', run: 'run-2' })).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns' } });
    const dispatch = { tenant: 'acme', run: 'run-1', grant: 'tool://payments/refund', ceilings: [{ count: 1, windowSeconds: 60 }] };
    expect(await p.plane.dispatch({ ...dispatch, dispatch: 'd-1' })).toEqual({ ok: true });
    expect(await p.plane.dispatch({ ...dispatch, dispatch: 'd-2' })).toMatchObject({ ok: false, refusal: { code: 'RateLimited' } });
    await p.plane.settle({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true });

    const unset = SpanStatusCode.UNSET;
    expect(finished()).toEqual([
      { name: 'quotaplane.admit', scope: TRACER_NAME, status: unset, attributes: { 'quotaplane.tenant': 'acme', 'quotaplane.run': 'run-1', 'quotaplane.outcome': 'admitted' } },
      {
        name: 'quotaplane.admit',
        scope: TRACER_NAME,
        status: unset,
        attributes: { 'quotaplane.tenant': 'acme', 'quotaplane.run': 'run-2', 'quotaplane.outcome': 'refused', 'quotaplane.refusal.code': 'TooManyRuns' },
      },
      {
        name: 'quotaplane.dispatch',
        scope: TRACER_NAME,
        status: unset,
        attributes: { 'quotaplane.tenant': 'acme', 'quotaplane.run': 'run-1', 'quotaplane.grant': dispatch.grant, 'quotaplane.outcome': 'counted' },
      },
      {
        name: 'quotaplane.dispatch',
        scope: TRACER_NAME,
        status: unset,
        attributes: {
          'quotaplane.tenant': 'acme',
          'quotaplane.run': 'run-1',
          'quotaplane.grant': dispatch.grant,
          'quotaplane.outcome': 'refused',
          'quotaplane.refusal.code': 'RateLimited',
        },
      },
      {
        name: 'quotaplane.settle',
        scope: TRACER_NAME,
        status: unset,
        attributes: { 'quotaplane.tenant': 'acme', 'quotaplane.run': 'run-1', 'quotaplane.epoch': 1, 'quotaplane.outcome': 'settled' },
      },
    ]);
  });

  it('a call that throws ends its span with status ERROR, the error code and the exception', async () => {
    await expect(p.plane.settle({ tenant: 'acme', run: 'run-none', epoch: 1, spend: { tokens: 0, minorUnits: 0 }, concludes: true })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(p.plane.admit({ tenant: 'acme', width: -1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    const [notFound, invalid] = exporter.getFinishedSpans();
    expect(notFound).toMatchObject({
      name: 'quotaplane.settle',
      status: { code: SpanStatusCode.ERROR },
      attributes: { 'quotaplane.tenant': 'acme', 'quotaplane.run': 'run-none', 'quotaplane.error.code': 'NOT_FOUND' },
    });
    expect(notFound?.events.map((event) => event.name)).toEqual(['exception']);
    expect(notFound?.attributes['quotaplane.outcome']).toBeUndefined();
    // Refused before the run was named: no run attribute, but the span and its error are there.
    expect(invalid).toMatchObject({ name: 'quotaplane.admit', status: { code: SpanStatusCode.ERROR }, attributes: { 'quotaplane.error.code': 'INVALID_ARGUMENT' } });
    expect(invalid?.attributes['quotaplane.run']).toBeUndefined();
    expect(exporter.getFinishedSpans()).toHaveLength(2);
  });
});
