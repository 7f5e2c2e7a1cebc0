import { Agent, Runner, type Model, type ModelRequest } from '@openai/agents';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

import { estimateInputTokens, meterModel, meterModelCalls, ModelCallLimitedError } from '../../src/adapters/openai-agents/index.js';
import { withRun } from '../../src/adapters/with-run.js';
import type { Plane } from '../../src/plane/plane.js';
import { ceilings, CLOCK, gate, openCalls, tenantMeter } from './call-ceiling-fixtures.js';
import { BUDGET, FakeModel, message, MODEL_NAME, PRICES, priceOf, usage } from './openai-agents-scenarios.js';
import { clientTarget, planeTarget, standardQuota, T0, type Target } from './run-fixtures.js';

// The Agents SDK model wrapper against model-call ceilings, on the in-process plane (SQLite in
// memory) and through the HTTP client, with a fake Model.

const runner = new Runner({ tracingDisabled: true });
const ESTIMATE = 20;

const targets: Target[] = [];
afterEach(async () => {
  for (const target of targets.splice(0)) await target.close();
});
// Each case runs on the in-process plane and through the HTTP client (a runner key of acme).
const TARGETS = [
  { name: 'in process', open: planeTarget },
  { name: 'over HTTP', open: clientTarget },
];
let openTarget: () => Promise<Target> = planeTarget;
async function plane(): Promise<Plane> {
  const target = await openTarget();
  targets.push(target);
  return target.plane;
}

function wrap(model: Model, p: Plane, extra: Record<string, unknown> = {}): Model {
  return meterModelCalls(model, { plane: p, tenant: 'acme', modelName: MODEL_NAME, prices: PRICES, clock: CLOCK, countInputTokens: () => ESTIMATE, ...extra });
}

function agent(model: Model, maxTokens?: number): Agent {
  return new Agent({ name: 'helper', instructions: 'Be brief.', model, ...(maxTokens === undefined ? {} : { modelSettings: { maxTokens } }) });
}

const worstCost = (tokens: number) => Math.ceil((tokens * 15_000_000) / 1_000_000);
const NOTHING = { tokens: 0, requests: 0, minorUnits: 0 };

describe.each(TARGETS)('meterModelCalls (Agents SDK), $name', ({ open }) => {
  beforeAll(() => {
    openTarget = open;
  });
  it('books a turn as reported, and caps a request that declares no maxTokens at its reservation', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }], defaultMaxOutputTokens: 64 });
    const fake = new FakeModel([() => message('one', usage(120, 30)), () => message('two', usage(10, 5))]);
    await runner.run(agent(wrap(fake, p), 500), 'first');
    // Priced and with no maxTokens: the tenant's defaultMaxOutputTokens, priced by the plane (M5).
    await runner.run(agent(wrap(fake, p)), 'second');
    expect(fake.requests.map((request) => request.modelSettings.maxTokens)).toEqual([500, 64]);
    expect(await openCalls(p)).toEqual([]);
    expect(await tenantMeter(p)).toEqual({ booked: { tokens: 165, requests: 2, minorUnits: priceOf(120, 30) + priceOf(10, 5) }, held: NOTHING });
  });

  it('without a counter, reserves the documented estimate of the instructions, input and tools', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }] });
    let held = 0;
    const fake = new FakeModel([
      async () => {
        held = (await tenantMeter(p)).held.tokens;
        return message('ok', usage(10, 5));
      },
    ]);
    await runner.run(agent(wrap(fake, p, { countInputTokens: undefined }), 100), 'y'.repeat(3_000));
    const request = fake.requests[0]!;
    const input = typeof request.input === 'string' ? [request.input] : request.input;
    expect(held).toBe(estimateInputTokens([request.systemInstructions, ...input], [request.tools, request.handoffs, request.outputType]) + 100);
    expect(held - 100).toBeGreaterThanOrEqual(1_000);
  });

  it('lets concurrent calls through only as far as the ceiling', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 2_000, windowSeconds: 60 }] });
    const wait = gate();
    const fake = new FakeModel(
      Array.from({ length: 6 }, () => async () => {
        await wait.opened;
        return message('ok', usage(ESTIMATE, 500));
      }),
    );
    const wrapped = wrap(fake, p);
    const request = (n: number): ModelRequest =>
      ({ input: `question ${n}`, modelSettings: { maxTokens: 500 }, tools: [], outputType: 'text', handoffs: [], tracing: false }) as ModelRequest;
    const calls = Array.from({ length: 6 }, (_, n) => wrapped.getResponse(request(n)).then(() => 'ok', (error: unknown) => error));
    await vi.waitFor(() => expect(fake.requests).toHaveLength(3));
    expect((await tenantMeter(p)).held.tokens).toBe(3 * (ESTIMATE + 500));
    wait.open();
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(3);
    expect(outcomes.filter((outcome) => outcome instanceof ModelCallLimitedError)).toHaveLength(3);
    expect(fake.requests).toHaveLength(3);
    expect((await tenantMeter(p)).booked.tokens).toBe(3 * (ESTIMATE + 500));
  });

  it('refuses a call that can never fit without calling the model, and a limited one with retryAtMs', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'requests', limit: 1, windowSeconds: 60 }], models: { [MODEL_NAME]: [{ unit: 'tokens', limit: 1_000, windowSeconds: 60 }] } });
    const fake = new FakeModel([() => message('ok', usage(10, 5))]);
    const never = await runner.run(agent(wrap(fake, p), 4_000), 'too big').catch((error: unknown) => error);
    expect(never).toBeInstanceOf(ModelCallLimitedError);
    expect(never).toMatchObject({ retryAtMs: undefined, refusal: { code: 'CallNeverFits', subject: `model:${MODEL_NAME}` } });
    expect(fake.requests).toHaveLength(0);
    await runner.run(agent(wrap(fake, p), 100), 'fits');
    const limited = await runner.run(agent(wrap(fake, p), 100), 'again').catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(ModelCallLimitedError);
    expect(limited).toMatchObject({ retryAtMs: T0 + 60_000, retryAfterMs: 60_000, refusal: { code: 'CallLimited', subject: 'tenant' } });
    expect((limited as Error).message).toMatch(/retry at 2026-01-05T08:01:00\.000Z/);
    expect(fake.requests).toHaveLength(1);
  });

  it('gives a call that threw back: nothing booked', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }] });
    const fake = new FakeModel([
      () => {
        throw new Error('the provider failed');
      },
    ]);
    await expect(runner.run(agent(wrap(fake, p), 100), 'go')).rejects.toThrow('the provider failed');
    expect(await openCalls(p)).toEqual([]);
    expect(await tenantMeter(p)).toEqual({ booked: NOTHING, held: NOTHING });
  });

  it('a streamed turn holds its reservation until the stream ends, then books its response_done usage', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }] });
    const fake = new FakeModel([() => message('one two three', usage(200, 80))]);
    const streamed = await runner.run(agent(wrap(fake, p), 300), 'stream it', { stream: true });
    let heldMidway: number | undefined;
    for await (const event of streamed) {
      if (heldMidway === undefined && event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') {
        heldMidway = (await tenantMeter(p)).held.tokens;
      }
    }
    await streamed.completed;
    expect(heldMidway).toBe(ESTIMATE + 300);
    expect(await openCalls(p)).toEqual([]);
    expect(await tenantMeter(p)).toEqual({ booked: { tokens: 280, requests: 1, minorUnits: priceOf(200, 80) }, held: NOTHING });
  });

  it('a stream left early books its worst case as an estimate: more than zero', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }] });
    const fake = new FakeModel([() => message('one two three four', usage(300, 300))], 5);
    const request = { input: 'go', modelSettings: { maxTokens: 300 }, tools: [], outputType: 'text', handoffs: [], tracing: false } as ModelRequest;
    for await (const event of wrap(fake, p).getStreamedResponse(request)) {
      if (event.type === 'output_text_delta') break;
    }
    expect(await openCalls(p)).toEqual([]);
    const meter = await tenantMeter(p);
    expect(meter.booked.tokens).toBeGreaterThan(0);
    expect(meter).toEqual({ booked: { tokens: ESTIMATE + 300, requests: 1, minorUnits: worstCost(ESTIMATE + 300) }, held: NOTHING });
    const [call] = await p.callStandings({ tenant: 'acme' });
    expect(call?.subject).toBe('tenant');
  });

  it('a stream that fails before its first event gives the reservation back; one that fails after books its worst case', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }] });
    let attempt = 0;
    const failing: Model = {
      getResponse: () => Promise.reject(new Error('unused')),
      async *getStreamedResponse() {
        attempt += 1;
        if (attempt === 1) throw new Error('connection refused');
        yield { type: 'response_started' };
        throw new Error('connection reset');
      },
    };
    const request = { input: 'go', modelSettings: { maxTokens: 100 }, tools: [], outputType: 'text', handoffs: [], tracing: false } as ModelRequest;
    const drain = async () => {
      for await (const _event of wrap(failing, p).getStreamedResponse(request));
    };
    await expect(drain()).rejects.toThrow('connection refused');
    expect(await tenantMeter(p)).toEqual({ booked: NOTHING, held: NOTHING });
    await expect(drain()).rejects.toThrow('connection reset');
    expect(await openCalls(p)).toEqual([]);
    expect(await tenantMeter(p)).toEqual({ booked: { tokens: ESTIMATE + 100, requests: 1, minorUnits: worstCost(ESTIMATE + 100) }, held: NOTHING });
  });

  it('composes around meterModel in a run: the run cap applies within the reservation, both books count the turn, a refusal books nothing in the run', async () => {
    const p = await plane();
    await standardQuota(p, 'acme');
    await ceilings(p, { tenant: [{ unit: 'requests', limit: 1, windowSeconds: 60 }] });
    const fake = new FakeModel([() => message('ok', usage(300, 100))]);
    const done = await withRun(p, { tenant: 'acme', run: 'run-both', budget: BUDGET }, async (run) => {
      const model = wrap(meterModel(run, fake, { modelName: MODEL_NAME, prices: PRICES }), p);
      await runner.run(agent(model, 4_096), 'go');
      return runner.run(agent(model, 4_096), 'again').then(() => 'called', (error: unknown) => error);
    });
    expect(done.ok).toBe(true);
    if (!done.ok) return;
    expect(done.value).toBeInstanceOf(ModelCallLimitedError);
    // What the run's 20 000 micro-USD per call buys at $15 per million, within the 4 096 reserved.
    expect(fake.requests.map((request) => request.modelSettings.maxTokens)).toEqual([1_333]);
    expect(done.spend).toEqual({ tokens: 400, minorUnits: priceOf(300, 100) });
    expect(done.estimated).toBe(false);
    expect(await tenantMeter(p)).toEqual({ booked: { tokens: 400, requests: 1, minorUnits: priceOf(300, 100) }, held: NOTHING });
  });
});
