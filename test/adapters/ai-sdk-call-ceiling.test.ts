import { APICallError, generateText, streamText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

import { callCeilingMiddleware, estimateInputTokens, ModelCallLimitedError, quotaMiddleware } from '../../src/adapters/ai-sdk/index.js';
import { withRun } from '../../src/adapters/with-run.js';
import type { Plane } from '../../src/plane/plane.js';
import { MODEL_ID, PRICES, priceOf, text, usage } from './ai-sdk-scenarios.js';
import { ceilings, CLOCK, gate, openCalls, tenantMeter } from './call-ceiling-fixtures.js';
import { clientTarget, planeTarget, standardQuota, T0, type Target } from './run-fixtures.js';

// The AI SDK middleware against model-call ceilings, on the in-process plane (SQLite in memory)
// and through the HTTP client, with the AI SDK's own mock model.

type StreamPart = Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

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

function wrap(model: MockLanguageModelV3, planeUsed: Plane, extra: Record<string, unknown> = {}) {
  return wrapLanguageModel({ model, middleware: callCeilingMiddleware({ plane: planeUsed, tenant: 'acme', prices: PRICES, clock: CLOCK, countInputTokens: () => ESTIMATE, ...extra }) });
}

/** A stream the test feeds part by part. */
function fedStream(): { stream: ReadableStream<StreamPart>; push(part: StreamPart): void; close(): void; fail(reason: unknown): void } {
  let controller!: ReadableStreamDefaultController<StreamPart>;
  const stream = new ReadableStream<StreamPart>({
    start(c) {
      controller = c;
    },
  });
  return { stream, push: (part) => controller.enqueue(part), close: () => controller.close(), fail: (reason) => controller.error(reason) };
}

const PROMPT = 'hello there';
/** The input tokens the tests' counter answers (one test uses the default estimate instead). */
const ESTIMATE = 20;

describe.each(TARGETS)('callCeilingMiddleware (AI SDK), $name', ({ open }) => {
  beforeAll(() => {
    openTarget = open;
  });
  it('books a generate call as reported, tokens and cost, and caps a call that declares no output limit at its reservation', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }], defaultMaxOutputTokens: 256 });
    const model = new MockLanguageModelV3({ modelId: MODEL_ID, doGenerate: async () => text('hi', usage(120, 30)) });
    await generateText({ model: wrap(model, p), prompt: PROMPT, maxOutputTokens: 500 });
    // Unpriced: the tenant's default cap (256) is reserved and asked for.
    const unpriced = new MockLanguageModelV3({ modelId: 'unpriced', doGenerate: async () => text('hi', usage(10, 5)) });
    await generateText({ model: wrap(unpriced, p), prompt: PROMPT });
    // Priced with no cap: the tenant's default cap too, priced by the plane at the dearest rate (M5).
    const priced = new MockLanguageModelV3({ modelId: MODEL_ID, doGenerate: async () => text('hi', usage(10, 5)) });
    await generateText({ model: wrap(priced, p), prompt: PROMPT });
    expect(model.doGenerateCalls[0]?.maxOutputTokens).toBe(500);
    expect(unpriced.doGenerateCalls[0]?.maxOutputTokens).toBe(256);
    expect(priced.doGenerateCalls[0]?.maxOutputTokens).toBe(256);
    expect(await openCalls(p)).toEqual([]);
    expect(await tenantMeter(p)).toEqual({
      booked: { tokens: 150 + 15 + 15, requests: 3, minorUnits: priceOf(120, 30) + priceOf(10, 5) },
      held: { tokens: 0, requests: 0, minorUnits: 0 },
    });
  });

  it('reserves the worst case at the dearest rate while the call is in flight', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'minorUnits', limit: 10_000_000, windowSeconds: 60 }] });
    const wait = gate();
    let held: unknown;
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doGenerate: async () => {
        held = (await tenantMeter(p)).held;
        await wait.opened;
        return text('hi', usage(100, 10));
      },
    });
    const done = generateText({ model: wrap(model, p), prompt: PROMPT, maxOutputTokens: 1_000 });
    await vi.waitFor(() => expect(held).toBeDefined());
    wait.open();
    await done;
    expect(held).toEqual({ tokens: ESTIMATE + 1_000, requests: 1, minorUnits: Math.ceil(((ESTIMATE + 1_000) * 15_000_000) / 1_000_000) });
    expect((await tenantMeter(p)).booked).toEqual({ tokens: 110, requests: 1, minorUnits: priceOf(100, 10) });
  });

  it('without a counter, reserves the documented estimate of the prompt, tools included', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }] });
    let held = 0;
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doGenerate: async () => {
        held = (await tenantMeter(p)).held.tokens;
        return text('hi', usage(10, 5));
      },
    });
    const long = 'x'.repeat(3_000);
    await generateText({ model: wrap(model, p, { countInputTokens: undefined }), system: 'be brief', prompt: long, maxOutputTokens: 100 });
    const call = model.doGenerateCalls[0]!;
    expect(held).toBe(estimateInputTokens(call.prompt, [call.tools, call.responseFormat]) + 100);
    // Two messages (4 each), the call (3), and at least 3 000 / 3 for the text.
    expect(held - 100).toBeGreaterThanOrEqual(3 + 8 + 1_000);
    expect(held - 100).toBeLessThan(3 + 8 + 1_000 + 30);
  });

  it('lets concurrent calls through only as far as the ceiling: never two that pass it together', async () => {
    const p = await plane();
    // Each call's worst case is the estimate plus 500 output tokens: three fit in 2 000, four do not.
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 2_000, windowSeconds: 60 }] });
    const wait = gate();
    let inFlight = 0;
    let most = 0;
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doGenerate: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await wait.opened;
        inFlight -= 1;
        return text('hi', usage(ESTIMATE, 500));
      },
    });
    const wrapped = wrap(model, p);
    const calls = Array.from({ length: 6 }, () => generateText({ model: wrapped, prompt: PROMPT, maxOutputTokens: 500, maxRetries: 0 }).then(() => 'ok', (error: unknown) => error));
    await vi.waitFor(() => expect(model.doGenerateCalls).toHaveLength(3));
    const meter = await tenantMeter(p);
    expect(meter.held.tokens).toBe(3 * (ESTIMATE + 500));
    wait.open();
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((outcome) => outcome === 'ok')).toHaveLength(3);
    const refused = outcomes.filter((outcome) => outcome instanceof ModelCallLimitedError) as ModelCallLimitedError[];
    expect(refused).toHaveLength(3);
    expect(refused[0]?.refusal).toMatchObject({ code: 'CallLimited', retryAfter: 'in-flight' });
    expect(most).toBe(3);
    expect(model.doGenerateCalls).toHaveLength(3);
    expect((await tenantMeter(p)).booked.tokens).toBe(3 * (ESTIMATE + 500));
  });

  it('refuses an option it does not know, naming it, when made', async () => {
    const p = await plane();
    expect(() => callCeilingMiddleware({ plane: p, tenant: 'acme', defaultMaxOutputTokens: 256 } as never)).toThrow(/defaultMaxOutputTokens: is not an option/);
  });

  it('refuses a call whose worst case can never fit at once, without calling the model', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100, windowSeconds: 60 }] });
    const model = new MockLanguageModelV3({ modelId: MODEL_ID, doGenerate: async () => text('never', usage(1, 1)) });
    const thrown = await generateText({ model: wrap(model, p), prompt: PROMPT, maxOutputTokens: 500 }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ModelCallLimitedError);
    const error = thrown as ModelCallLimitedError;
    expect(error.refusal).toMatchObject({ code: 'CallNeverFits', requested: ESTIMATE + 500 });
    expect(error.retryAtMs).toBeUndefined();
    expect(error.message).toMatch(/can never fit.*waiting will not help/);
    expect(model.doGenerateCalls).toHaveLength(0);
    expect(await openCalls(p)).toEqual([]);
  });

  it("a refused call's error carries retryAtMs and retryAfterMs, and says when to retry", async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'requests', limit: 1, windowSeconds: 60 }] });
    const model = new MockLanguageModelV3({ modelId: MODEL_ID, doGenerate: async () => text('hi', usage(10, 5)) });
    const wrapped = wrap(model, p);
    await generateText({ model: wrapped, prompt: PROMPT, maxOutputTokens: 100 });
    const thrown = await generateText({ model: wrapped, prompt: PROMPT, maxOutputTokens: 100 }).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ModelCallLimitedError);
    expect(thrown).toMatchObject({ retryAtMs: T0 + 60_000, retryAfterMs: 60_000, refusal: { code: 'CallLimited', retryAfter: 'window' } });
    expect((thrown as Error).message).toMatch(/retry at 2026-01-05T08:01:00\.000Z.*retryAtMs 1767600060000/);
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('gives a failed call back, and a retry by the SDK is a new reservation', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }] });
    let attempt = 0;
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doGenerate: async () => {
        attempt += 1;
        if (attempt === 1) throw new APICallError({ message: 'overloaded', url: 'https://model.test', requestBodyValues: {}, statusCode: 529, isRetryable: true });
        if (attempt === 2) return text('hi', usage(40, 10));
        throw new Error('the provider failed');
      },
    });
    const wrapped = wrap(model, p);
    await generateText({ model: wrapped, prompt: PROMPT, maxOutputTokens: 100, maxRetries: 1 });
    await expect(generateText({ model: wrapped, prompt: PROMPT, maxOutputTokens: 100, maxRetries: 0 })).rejects.toThrow('the provider failed');
    expect(model.doGenerateCalls).toHaveLength(3);
    expect(await openCalls(p)).toEqual([]);
    expect(await tenantMeter(p)).toEqual({ booked: { tokens: 50, requests: 1, minorUnits: priceOf(40, 10) }, held: { tokens: 0, requests: 0, minorUnits: 0 } });
  }, 15_000);

  it('a stream holds its reservation until it ends, then books what it reported', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }] });
    const fed = fedStream();
    const model = new MockLanguageModelV3({ modelId: MODEL_ID, doStream: async () => ({ stream: fed.stream }) });
    const streamed = streamText({ model: wrap(model, p), prompt: PROMPT, maxOutputTokens: 300 });
    fed.push({ type: 'stream-start', warnings: [] });
    fed.push({ type: 'text-start', id: 't' });
    fed.push({ type: 'text-delta', id: 't', delta: 'one ' });
    const reader = streamed.textStream[Symbol.asyncIterator]();
    expect((await reader.next()).value).toBe('one ');
    expect(await openCalls(p)).toHaveLength(1);
    expect((await tenantMeter(p)).held.tokens).toBe(ESTIMATE + 300);
    fed.push({ type: 'text-delta', id: 't', delta: 'two' });
    fed.push({ type: 'text-end', id: 't' });
    fed.push({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(200, 80) });
    fed.close();
    for (let next = await reader.next(); next.done !== true; next = await reader.next());
    await streamed.consumeStream();
    expect(await openCalls(p)).toEqual([]);
    expect(await tenantMeter(p)).toEqual({ booked: { tokens: 280, requests: 1, minorUnits: priceOf(200, 80) }, held: { tokens: 0, requests: 0, minorUnits: 0 } });
  });

  it('an aborted stream books its worst case as an estimate: more than zero', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }] });
    const fed = fedStream();
    // As a provider's fetch does, the model's stream errors when the call's signal aborts.
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doStream: async ({ abortSignal }) => {
        abortSignal?.addEventListener('abort', () => fed.fail(abortSignal.reason));
        return { stream: fed.stream };
      },
    });
    const abort = new AbortController();
    const streamed = streamText({ model: wrap(model, p), prompt: PROMPT, maxOutputTokens: 300, abortSignal: abort.signal, onError: () => {} });
    fed.push({ type: 'stream-start', warnings: [] });
    fed.push({ type: 'text-start', id: 't' });
    fed.push({ type: 'text-delta', id: 't', delta: 'one ' });
    await (async () => {
      for await (const delta of streamed.textStream) {
        if (delta.length > 0) abort.abort(new Error('the user closed the page'));
      }
    })().catch(() => undefined);
    await vi.waitFor(async () => expect(await openCalls(p)).toEqual([]));
    const meter = await tenantMeter(p);
    expect(meter.booked.tokens).toBeGreaterThan(0);
    expect(meter.booked).toEqual({ tokens: ESTIMATE + 300, requests: 1, minorUnits: Math.ceil(((ESTIMATE + 300) * 15_000_000) / 1_000_000) });
    expect(meter.held.tokens).toBe(0);
  });

  it('a stream cancelled by its reader before it reported books its worst case; one that failed to open gives it back', async () => {
    const p = await plane();
    await ceilings(p, { tenant: [{ unit: 'tokens', limit: 100_000, windowSeconds: 60 }] });
    const fed = fedStream();
    let opens = 0;
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doStream: async () => {
        opens += 1;
        if (opens === 2) throw new Error('connection refused');
        return { stream: fed.stream };
      },
    });
    const wrapped = wrap(model, p);
    fed.push({ type: 'stream-start', warnings: [] });
    const { stream } = await wrapped.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: PROMPT }] }], maxOutputTokens: 50 });
    const reader = stream.getReader();
    await reader.read();
    expect(await openCalls(p)).toHaveLength(1);
    await reader.cancel('not needed');
    expect(await openCalls(p)).toEqual([]);
    await expect(wrapped.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: PROMPT }] }], maxOutputTokens: 50 })).rejects.toThrow('connection refused');
    expect(await openCalls(p)).toEqual([]);
    expect(await tenantMeter(p)).toEqual({ booked: { tokens: ESTIMATE + 50, requests: 1, minorUnits: Math.ceil(((ESTIMATE + 50) * 15_000_000) / 1_000_000) }, held: { tokens: 0, requests: 0, minorUnits: 0 } });
  });

  it('composes with quotaMiddleware in a run: both books count the call, and a refusal leaves the run unbooked', async () => {
    const p = await plane();
    await standardQuota(p, 'acme');
    await ceilings(p, { tenant: [{ unit: 'requests', limit: 1, windowSeconds: 60 }] });
    const model = new MockLanguageModelV3({ modelId: MODEL_ID, doGenerate: async () => text('hi', usage(300, 100)) });
    const budget = { maxTokens: 10_000, maxCallTokens: 2_000, maxMinorUnits: 100_000, maxCallMinorUnits: 20_000 };
    const done = await withRun(p, { tenant: 'acme', run: 'run-both', budget }, async (run) => {
      const wrapped = wrapLanguageModel({
        model,
        middleware: [callCeilingMiddleware({ plane: p, tenant: 'acme', prices: PRICES, clock: CLOCK }), quotaMiddleware(run, { prices: PRICES })],
      });
      await generateText({ model: wrapped, prompt: PROMPT, maxOutputTokens: 4_096 });
      return generateText({ model: wrapped, prompt: PROMPT, maxOutputTokens: 4_096, maxRetries: 0 }).then(() => 'called', (error: unknown) => error);
    });
    expect(done.ok).toBe(true);
    if (!done.ok) return;
    expect(done.value).toBeInstanceOf(ModelCallLimitedError);
    // The run's cap (what its 20 000 micro-USD per call buys at $15 per million) applies within the ceiling's reservation (4 096).
    expect(model.doGenerateCalls.map((call) => call.maxOutputTokens)).toEqual([1_333]);
    expect(done.spend).toEqual({ tokens: 400, minorUnits: priceOf(300, 100) });
    expect(done.estimated).toBe(false);
    expect((await tenantMeter(p)).booked).toEqual({ tokens: 400, requests: 1, minorUnits: priceOf(300, 100) });
  });
});
