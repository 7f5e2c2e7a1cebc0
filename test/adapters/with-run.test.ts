import { afterEach, describe, expect, it } from 'vitest';

import { RunRefusedError, RunSettleError, RunWithheldError } from '../../src/adapters/run-errors.js';
import type { RunPlane } from '../../src/adapters/run-plane.js';
import { withRun } from '../../src/adapters/with-run.js';
import { createClient } from '../../src/client/create-client.js';
import { QuotaError } from '../../src/core/errors.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane, SettleInput } from '../../src/plane/plane.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { OPS, T0 } from './run-fixtures.js';

// withRun's lifecycle on the in-process plane; the SDK scenarios run it over the HTTP client too.

// Both the plane and the HTTP client are RunPlanes as they are (checked by the compiler).
const clientIsRunPlane: (client: ReturnType<typeof createClient>) => RunPlane = (client) => client;
const planeIsRunPlane: (plane: Plane) => RunPlane = (plane) => plane;
void clientIsRunPlane;
void planeIsRunPlane;

const stores: QuotaStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function fixture(): Promise<{ plane: Plane; clock: ManualClock }> {
  const store = await openStore('sqlite::memory:');
  stores.push(store);
  const clock = new ManualClock(T0);
  const plane = createPlane({ store, clock });
  await plane.setQuota('acme', { period: 'monthly', maxConcurrentRuns: 1, maxTokensPerPeriod: 100_000 }, { by: OPS, newTenant: true });
  return { plane, clock };
}

const budget = { maxTokens: 1_000, maxCallTokens: 100 };

/** Waits until `signal` aborts, then rejects with its reason: a body that only stops when told to. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason as Error);
    else signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
  });
}

describe('withRun', () => {
  it('returns a refusal as a value and never runs the body; throwOnRefusal throws it instead', async () => {
    const { plane } = await fixture();
    await plane.admit({ tenant: 'acme', run: 'holder', budget });
    let ran = false;
    const refused = await withRun(plane, { tenant: 'acme', budget }, async () => (ran = true));
    expect(refused).toMatchObject({ ok: false, refusal: { code: 'TooManyRuns', running: 1, limit: 1 } });
    const thrown = await withRun(plane, { tenant: 'acme', budget, throwOnRefusal: true }, async () => (ran = true)).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(RunRefusedError);
    expect((thrown as RunRefusedError).refused.refusal.code).toBe('TooManyRuns');
    expect(ran).toBe(false);
  });

  it('a body that returns settles once, concluding with the recorded spend', async () => {
    const { plane } = await fixture();
    const done = await withRun(plane, { tenant: 'acme', run: 'run-1', budget }, async (run) => {
      run.record({ tokens: 40, minorUnits: 0 });
      run.record({ tokens: 2, minorUnits: 0 });
      expect(run.remaining()).toEqual({ tokens: 958, minorUnits: undefined });
      return 'answer';
    });
    expect(done).toMatchObject({ ok: true, value: 'answer', run: 'run-1', epoch: 1, spend: { tokens: 42, minorUnits: 0 }, estimated: false });
    if (done.ok) expect(done.settle).toMatchObject({ outcome: 'settled', receipt: { concludes: true, spend: { tokens: 42, minorUnits: 0 } } });
    expect(await plane.usage({ tenant: 'acme' })).toMatchObject({ spent: { tokens: 42 }, reserved: { tokens: 0 }, running: 0 });
  });

  it('a subject halt reaches the body at its next timed heartbeat: the signal aborts and the pass settles without concluding', async () => {
    const { plane } = await fixture();
    const thrown = await withRun(plane, { tenant: 'acme', run: 'run-1', chain: ['alice'], budget, heartbeatEveryMs: 10 }, async (run) => {
      run.record({ tokens: 7, minorUnits: 0 });
      await plane.halt({ tenant: 'acme', scope: 'subject:alice', reason: 'left the company', by: OPS, newTenant: true });
      return untilAborted(run.signal);
    }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(RunWithheldError);
    expect(thrown).toMatchObject({ run: 'run-1', epoch: 1, spend: { tokens: 7, minorUnits: 0 }, refusal: { subject: 'alice', reason: 'left the company' } });
    expect((thrown as RunWithheldError).settle?.receipt).toMatchObject({ concludes: false, spend: { tokens: 7 } });
    expect((await plane.runs({ tenant: 'acme' })).runs).toMatchObject([{ run: 'run-1', status: 'withheld', holdsSlot: false }]);
  });

  it('the caller’s AbortSignal ends the run like an error: the pass concludes and the reason comes out', async () => {
    const { plane } = await fixture();
    const abort = new AbortController();
    const thrown = await withRun(plane, { tenant: 'acme', run: 'run-1', budget, signal: abort.signal }, async (run) => {
      run.record({ tokens: 5, minorUnits: 0 });
      abort.abort(new Error('stop'));
      return untilAborted(run.signal);
    }).catch((error: unknown) => error);
    expect(thrown).toEqual(new Error('stop'));
    expect((await plane.runs({ tenant: 'acme' })).runs).toMatchObject([{ run: 'run-1', status: 'concluded' }]);
    expect((await plane.usage({ tenant: 'acme' })).spent.tokens).toBe(5);
  });

  it('an already aborted signal admits nothing', async () => {
    const { plane } = await fixture();
    const thrown = await withRun(plane, { tenant: 'acme', budget, signal: AbortSignal.abort(new Error('gone')) }, async () => 1).catch((error: unknown) => error);
    expect(thrown).toEqual(new Error('gone'));
    expect((await plane.usage({ tenant: 'acme' })).running).toBe(0);
  });

  it('a settle whose answer was lost is sent again with the same payload and answered from its receipt', async () => {
    const { plane } = await fixture();
    const sent: SettleInput[] = [];
    const lossy: RunPlane = {
      ...plane,
      async settle(input) {
        sent.push(input);
        const answer = await plane.settle(input);
        if (sent.length === 1) throw new QuotaError('STORE_UNAVAILABLE', 'the connection dropped before the answer');
        return answer;
      },
    };
    const done = await withRun(lossy, { tenant: 'acme', run: 'run-1', budget }, async (run) => void run.record({ tokens: 9, minorUnits: 0 }));
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual(sent[0]);
    expect(done).toMatchObject({ ok: true, settle: { outcome: 'already-settled' } });
    expect((await plane.usage({ tenant: 'acme' })).spent.tokens).toBe(9);
  });

  it('a settle that does not answer in time is sent again', async () => {
    const { plane } = await fixture();
    let attempts = 0;
    const stalled: RunPlane = {
      ...plane,
      settle(input) {
        attempts += 1;
        return attempts === 1 ? new Promise(() => {}) : plane.settle(input);
      },
    };
    const done = await withRun(stalled, { tenant: 'acme', run: 'run-1', budget, settleTimeoutMs: 20 }, async (run) => void run.record({ tokens: 3, minorUnits: 0 }));
    expect(attempts).toBe(2);
    expect(done).toMatchObject({ ok: true, settle: { outcome: 'settled' }, spend: { tokens: 3 } });
  });

  it('a settle that fails on every attempt throws RunSettleError with the exact settle to repeat', async () => {
    const { plane } = await fixture();
    const down: RunPlane = {
      ...plane,
      settle: async () => {
        throw new QuotaError('STORE_UNAVAILABLE', 'down');
      },
    };
    const thrown = await withRun(down, { tenant: 'acme', run: 'run-1', budget, settleAttempts: 2 }, async (run) => void run.record({ tokens: 11, minorUnits: 0 })).catch(
      (error: unknown) => error,
    );
    expect(thrown).toBeInstanceOf(RunSettleError);
    const pending = (thrown as RunSettleError).pending;
    expect(pending).toEqual({ tenant: 'acme', run: 'run-1', epoch: 1, spend: { tokens: 11, minorUnits: 0 }, concludes: true });
    expect(await plane.settle(pending)).toMatchObject({ outcome: 'settled' });
  });

  it('a pass swept from under the body is lost: the signal aborts with the CONFLICT, and the late settle is accepted once', async () => {
    const { plane, clock } = await fixture();
    const thrown = await withRun(plane, { tenant: 'acme', run: 'run-1', budget, leaseMs: 1_000 }, async (run) => {
      run.record({ tokens: 4, minorUnits: 0 });
      clock.advance(2_000);
      await plane.sweep({ tenant: 'acme' });
      await run.heartbeat().catch(() => {});
      expect(run.signal.aborted).toBe(true);
      run.throwIfStopped();
    }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(QuotaError);
    expect((thrown as QuotaError).code).toBe('CONFLICT');
    expect((await plane.usage({ tenant: 'acme' })).spent.tokens).toBe(4);
  });

  it('nothing recorded after the pass settled is booked silently', async () => {
    const { plane } = await fixture();
    let kept: Parameters<Parameters<typeof withRun>[2]>[0] | undefined;
    await withRun(plane, { tenant: 'acme', budget }, async (run) => void (kept = run));
    expect(() => kept?.record({ tokens: 1, minorUnits: 0 })).toThrow(/has settled/);
  });

  it('refuses malformed options by name before admitting anything', async () => {
    const { plane } = await fixture();
    for (const [options, field] of [
      [{ tenant: 'acme', heartbeatEveryMs: 0 }, 'heartbeatEveryMs'],
      [{ tenant: 'acme', settleAttempts: 1.5 }, 'settleAttempts'],
      [{ tenant: 'acme', run: 'a', resume: 'b' }, 'resume'],
      [{ tenant: 'acme', spentBefore: { tokens: -1, minorUnits: 0 } }, 'spentBefore.tokens'],
    ] as const) {
      const thrown = await withRun(plane, options, async () => 1).catch((error: unknown) => error);
      expect((thrown as QuotaError).details.field, field).toBe(field);
    }
    expect((await plane.usage({ tenant: 'acme' })).running).toBe(0);
  });
});
