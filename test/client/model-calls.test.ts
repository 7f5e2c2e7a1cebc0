import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createClient } from '../../src/client/create-client.js';
import type { Plane } from '../../src/plane/plane.js';
import { injectFetch, serviceFixture, type ServiceFixture } from '../http/http-fixtures.js';
import { fault } from './plane-scenarios.js';

// The model-call verbs through createClient against the service answer what the plane answers
// itself: the same scenario runs on a local plane and through a client of another service, on
// the same clock, and every answer is compared.

type CallVerbs = Pick<Plane, 'reserveCall' | 'adjustCall' | 'releaseCall' | 'modelCall' | 'openCalls' | 'getCallCeilings' | 'setCallCeilings' | 'callStandings'>;

const CEILINGS = {
  tenant: [{ unit: 'tokens' as const, limit: 1000, windowSeconds: 60 }],
  models: { 'gpt-4o': [{ unit: 'requests' as const, limit: 2, period: 'daily' as const }] },
  endUsers: { default: [{ unit: 'tokens' as const, limit: 800, windowSeconds: 3600 }] },
};

async function scenario(plane: CallVerbs, advance: (ms: number) => void): Promise<unknown[]> {
  const answers: unknown[] = [];
  const record = async (call: () => Promise<unknown>) => {
    try {
      answers.push(await call());
    } catch {
      answers.push(await fault(call));
    }
  };
  await record(() => plane.getCallCeilings('acme'));
  await record(() => plane.setCallCeilings('acme', CEILINGS, { newTenant: true }));
  await record(() => plane.getCallCeilings('acme'));
  await record(() => plane.reserveCall({ tenant: 'acme', model: 'gpt-4o', endUser: 'u1', callId: 'c1', inputTokens: 100, maxOutputTokens: 300 }));
  await record(() => plane.reserveCall({ tenant: 'acme', model: 'gpt-4o', endUser: 'u1', callId: 'c1', inputTokens: 100, maxOutputTokens: 300 }));
  await record(() => plane.reserveCall({ tenant: 'acme', model: 'gpt-4o', endUser: 'u1', callId: 'c2', inputTokens: 100, maxOutputTokens: 400 }));
  await record(() => plane.openCalls({ tenant: 'acme', limit: 10 }));
  await record(() => plane.callStandings({ tenant: 'acme' }));
  advance(5_000);
  await record(() => plane.adjustCall({ tenant: 'acme', callId: 'c1', usage: { inputTokens: 100, outputTokens: 250 } }));
  await record(() => plane.adjustCall({ tenant: 'acme', callId: 'c1', usage: { inputTokens: 100, outputTokens: 250 } }));
  await record(() => plane.releaseCall({ tenant: 'acme', callId: 'c2' }));
  // The model's daily ceiling of 2 requests is spent (c2 was released, so 1 booked): one more fits, then it refuses.
  await record(() => plane.reserveCall({ tenant: 'acme', model: 'gpt-4o', callId: 'c3', inputTokens: 10, maxOutputTokens: 10 }));
  await record(() => plane.reserveCall({ tenant: 'acme', model: 'gpt-4o', callId: 'c4', inputTokens: 10, maxOutputTokens: 10 }));
  // The tenant's window: 350 booked and 20 held; 700 more does not fit now.
  await record(() => plane.reserveCall({ tenant: 'acme', model: 'o3', callId: 'c5', inputTokens: 200, maxOutputTokens: 500 }));
  await record(() => plane.reserveCall({ tenant: 'acme', model: 'o3', callId: 'c6', inputTokens: 2000, maxOutputTokens: 1 }));
  await record(() => plane.modelCall({ tenant: 'acme', callId: 'c1' }));
  await record(() => plane.modelCall({ tenant: 'acme', callId: 'nope' }));
  await record(() => plane.adjustCall({ tenant: 'acme', callId: 'nope' }));
  await record(() => plane.releaseCall({ tenant: 'acme', callId: 'c1' }));
  await record(() => plane.reserveCall({ tenant: 'acme', model: 'o3', inputTokens: -1 }));
  await record(() => plane.setCallCeilings('acme', { tenant: [{ unit: 'tokens', limit: 1 }] } as never));
  await record(() => plane.callStandings({ tenant: 'acme', limit: 2 }));
  await record(() => plane.setCallCeilings('acme', null));
  await record(() => plane.getCallCeilings('acme'));
  return answers;
}

describe('model calls through the client answer what the plane answers', () => {
  let local: ServiceFixture;
  let served: ServiceFixture;
  beforeEach(async () => {
    [local, served] = await Promise.all([serviceFixture(), serviceFixture()]);
  });
  afterEach(async () => {
    await Promise.all([local.close(), served.close()]);
  });

  it('every verb, its refusals and its faults, answer for answer', async () => {
    const client = createClient({ url: 'http://quotaplane.test', key: served.key.opAll.secret, fetch: injectFetch(served.app) });
    const byPlane = await scenario(local.plane, (ms) => local.clock.advance(ms));
    const byClient = await scenario(client, (ms) => served.clock.advance(ms));
    expect(byClient).toEqual(byPlane);
    // The scenario reached what it means to: a retry, both refusals, the faults.
    expect(byPlane[4]).toMatchObject({ ok: true, retried: true });
    expect(byPlane[12]).toMatchObject({ ok: false, refusal: { code: 'CallLimited', subject: 'model:gpt-4o', retryAfter: 'period' } });
    expect(byPlane[13]).toMatchObject({ ok: false, refusal: { code: 'CallLimited', subject: 'tenant', retryAfter: 'window' } });
    expect(byPlane[14]).toMatchObject({ ok: false, refusal: { code: 'CallNeverFits', subject: 'tenant', requested: 2001 } });
    expect(byPlane[16]).toBeNull();
    expect(byPlane.slice(17, 21)).toEqual([
      { error: 'NOT_FOUND', field: 'callId' },
      { error: 'CONFLICT', field: 'callId' },
      { error: 'INVALID_ARGUMENT', field: 'inputTokens' },
      { error: 'INVALID_ARGUMENT', field: 'ceilings.tenant[0]' },
    ]);
  });

  it('a runner key reserves and ends calls of its own tenant, and reads no ceilings', async () => {
    await served.plane.setCallCeilings('acme', { ...CEILINGS, defaultMaxOutputTokens: 200 }, { newTenant: true });
    const runner = createClient({ url: 'http://quotaplane.test', key: served.key.runAcme.secret, fetch: injectFetch(served.app) });
    const made = await runner.reserveCall({ tenant: 'acme', model: 'gpt-4o', inputTokens: 5 });
    expect(made).toMatchObject({ ok: true, retried: false, call: { maxOutputTokens: 200 } });
    if (!made.ok) throw new Error('reserved');
    expect((await runner.adjustCall({ tenant: 'acme', callId: made.call.callId })).call).toMatchObject({ status: 'booked', estimated: true });
    expect(await runner.callStandings({ tenant: 'acme', limit: 1 })).toEqual(await served.plane.callStandings({ tenant: 'acme', limit: 1 }));
    expect(await fault(() => runner.getCallCeilings('acme'))).toEqual({ error: 'NOT_FOUND' });
    expect(await fault(() => runner.reserveCall({ tenant: 'globex', model: 'gpt-4o', inputTokens: 5 }))).toEqual({ error: 'NOT_FOUND' });
  });
});
