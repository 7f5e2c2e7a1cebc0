import { APICallError, generateText, stepCountIs, streamText, tool, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';

import { meterTools, quotaMiddleware, tokenCountsOf } from '../../src/adapters/ai-sdk/index.js';
import { withRun } from '../../src/adapters/with-run.js';
import { QuotaError } from '../../src/core/errors.js';
import { z } from 'zod';

import { BUDGET, metered, MODEL_ID, priceOf, PRICES, scriptedModel, text, toolCall, usage } from './ai-sdk-scenarios.js';
import { planeTarget, REFUND, standardQuota, type Target } from './run-fixtures.js';

// The usage a call books, whatever its provider reported (docs/design/decisions.md "Usage never
// reads as zero by absence").

type Usage = ReturnType<typeof usage>;
type StreamPart = Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

const targets: Target[] = [];
afterEach(async () => {
  for (const target of targets.splice(0)) await target.close();
});

async function acme(): Promise<Target> {
  const target = await planeTarget();
  targets.push(target);
  await standardQuota(target.plane, 'acme');
  return target;
}

const NO_USAGE: Usage = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

const retryable = () => new APICallError({ message: 'overloaded', url: 'https://model.test', requestBodyValues: {}, statusCode: 503, isRetryable: true });

describe('a call without a usage report books its per-call bound, marked as an estimate', () => {
  for (const [label, report] of [
    ['no counts at all', NO_USAGE],
    ['NaN and negative counts', { inputTokens: { ...NO_USAGE.inputTokens, total: Number.NaN }, outputTokens: { ...NO_USAGE.outputTokens, total: -3 } }],
    ['0 input and 0 output tokens', usage(0, 0)],
  ] as const) {
    it(label, async () => {
      const { plane } = await acme();
      const done = await withRun(plane, { tenant: 'acme', budget: BUDGET }, (run) =>
        generateText({ model: metered(run, scriptedModel([() => text('hi', report as Usage)])), prompt: 'hi' }),
      );
      expect(done).toMatchObject({ ok: true, spend: { tokens: BUDGET.maxCallTokens, minorUnits: BUDGET.maxCallMinorUnits }, estimated: true });
      expect((await plane.usage({ tenant: 'acme' })).spent).toEqual({ tokens: 2_000, minorUnits: 20_000 });
    });
  }
});

describe('streams', () => {
  const parts = (...usages: Usage[]): StreamPart[] => [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'hello' },
    { type: 'text-end', id: 't' },
    ...usages.map((used): StreamPart => ({ type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: used })),
  ];

  it('a stream read to its end books its finish usage', async () => {
    const { plane } = await acme();
    const model = new MockLanguageModelV3({ modelId: MODEL_ID, doStream: async () => ({ stream: simulateReadableStream({ chunks: parts(usage(700, 80, { cacheRead: 100 })) }) }) });
    const done = await withRun(plane, { tenant: 'acme', budget: BUDGET }, async (run) => {
      const streamed = streamText({ model: metered(run, model), prompt: 'hi' });
      return streamed.text;
    });
    expect(done).toMatchObject({ ok: true, value: 'hello', spend: { tokens: 780, minorUnits: priceOf(700, 80, 100) }, estimated: false });
  });

  it('usage repeated as cumulative frames counts once: the last frame, not the sum', async () => {
    const { plane } = await acme();
    const model = new MockLanguageModelV3({ modelId: MODEL_ID, doStream: async () => ({ stream: simulateReadableStream({ chunks: parts(usage(300, 10), usage(300, 40), usage(300, 90)) }) }) });
    const done = await withRun(plane, { tenant: 'acme', budget: BUDGET }, async (run) => {
      const wrapped = wrapLanguageModel({ model, middleware: quotaMiddleware(run, { prices: PRICES }) });
      const { stream } = await wrapped.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
      const seen: StreamPart[] = [];
      for await (const part of stream) seen.push(part);
      return seen.length;
    });
    expect(done).toMatchObject({ ok: true, value: 7, spend: { tokens: 390, minorUnits: priceOf(300, 90) }, estimated: false });
  });

  it('a stream abandoned unread when the body returns books its per-call bound', async () => {
    const { plane } = await acme();
    const model = new MockLanguageModelV3({ modelId: MODEL_ID, doStream: async () => ({ stream: simulateReadableStream({ chunks: parts(usage(300, 10)), initialDelayInMs: 5_000 }) }) });
    const done = await withRun(plane, { tenant: 'acme', budget: BUDGET }, async (run) => {
      const wrapped = wrapLanguageModel({ model, middleware: quotaMiddleware(run, { prices: PRICES }) });
      await wrapped.doStream({ prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
      return 'left it';
    });
    expect(done).toMatchObject({ ok: true, spend: { tokens: 2_000, minorUnits: 20_000 }, estimated: true });
  });
});

describe('failed calls', () => {
  it('a failed attempt that the SDK retries adds nothing: only the retry that answered is booked', async () => {
    const { plane } = await acme();
    const model = scriptedModel([
      () => {
        throw retryable();
      },
      () => text('second time lucky', usage(900, 100)),
    ]);
    const done = await withRun(plane, { tenant: 'acme', budget: BUDGET }, (run) => generateText({ model: metered(run, model), prompt: 'hi', maxRetries: 1 }));
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(done).toMatchObject({ ok: true, spend: { tokens: 1_000, minorUnits: priceOf(900, 100) }, estimated: false });
  });

  it('a call that finally fails books one per-call bound, not one per attempt', async () => {
    const { plane } = await acme();
    const model = scriptedModel([
      () => {
        throw retryable();
      },
      () => {
        throw retryable();
      },
    ]);
    const thrown = await withRun(plane, { tenant: 'acme', run: 'run-fails', budget: BUDGET }, (run) => generateText({ model: metered(run, model), prompt: 'hi', maxRetries: 1 })).catch(
      (error: unknown) => error,
    );
    expect(model.doGenerateCalls).toHaveLength(2);
    expect(thrown).toBeInstanceOf(Error);
    expect((await plane.usage({ tenant: 'acme' })).spent).toEqual({ tokens: 2_000, minorUnits: 20_000 });
  });
});

describe('caps', () => {
  it('money caps the output tokens: 15 000 micro-USD per call buys 1 000 output tokens at $15 per million', async () => {
    const { plane } = await acme();
    const model = scriptedModel([() => text('hi', usage(10, 10))]);
    await withRun(plane, { tenant: 'acme', budget: { ...BUDGET, maxCallMinorUnits: 15_000 } }, (run) => generateText({ model: metered(run, model), prompt: 'hi' }));
    expect(model.doGenerateCalls[0]?.maxOutputTokens).toBe(1_000);
  });

  it('calls in flight at once share what is left: the second of two parallel calls gets what the first did not reserve', async () => {
    const { plane } = await acme();
    let release = () => {};
    const bothStarted = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    const model = new MockLanguageModelV3({
      modelId: MODEL_ID,
      doGenerate: async () => {
        started += 1;
        if (started === 2) release();
        await bothStarted;
        return text('hi', usage(10, 10));
      },
    });
    await withRun(plane, { tenant: 'acme', width: 2, budget: { ...BUDGET, maxTokens: 3_000, maxMinorUnits: 1_000_000, maxCallMinorUnits: 100_000 } }, async (run) => {
      const wrapped = metered(run, model);
      return Promise.all([generateText({ model: wrapped, prompt: 'a' }), generateText({ model: wrapped, prompt: 'b' })]);
    });
    expect(model.doGenerateCalls.map((call) => call.maxOutputTokens)).toEqual([2_000, 1_000]);
  });

  it('a model with no price in a run that bounds money is refused before it is called, naming the price', async () => {
    const { plane } = await acme();
    const model = new MockLanguageModelV3({ modelId: 'unpriced', doGenerate: async () => text('hi', usage(10, 10)) });
    const thrown = await withRun(plane, { tenant: 'acme', budget: BUDGET }, (run) => generateText({ model: metered(run, model), prompt: 'hi', maxRetries: 0 })).catch(
      (error: unknown) => error,
    );
    expect(thrown).toBeInstanceOf(QuotaError);
    expect((thrown as QuotaError).details.field).toBe('prices["unpriced"]');
    expect(model.doGenerateCalls).toHaveLength(0);
  });
});

describe('meterTools', () => {
  it('keeps a tool that streams its output (an async generator) streaming, dispatched before its first value', async () => {
    const { plane } = await acme();
    const model = scriptedModel([() => toolCall('call-1', 'progress', { order: 'A-1' }, usage(10, 10)), () => text('done', usage(10, 10))]);
    const progress = tool({
      inputSchema: z.object({ order: z.string() }),
      async *execute({ order }) {
        yield `refunding ${order}`;
        yield `refunded ${order}`;
      },
    });
    const done = await withRun(plane, { tenant: 'acme', run: 'run-gen', budget: BUDGET }, async (run) => {
      const result = await generateText({ model: metered(run, model), tools: meterTools(run, { progress }, { grants: { progress: REFUND } }), stopWhen: stepCountIs(3), prompt: 'go' });
      // The tool's one dispatch was counted: 2 per minute are allowed, so one more fits and a third does not.
      return { result, probes: [await run.dispatch(REFUND, 'probe-1'), await run.dispatch(REFUND, 'probe-2')] };
    });
    expect(done.ok).toBe(true);
    if (!done.ok) return;
    const results = done.value.result.steps.flatMap((step) => step.content).filter((part) => part.type === 'tool-result');
    expect(results.map((part) => (part as { output: unknown }).output)).toEqual(['refunded A-1']);
    expect(done.value.probes).toMatchObject([{ ok: true }, { ok: false, refusal: { code: 'RateLimited' } }]);
  });
});

describe('tokenCountsOf', () => {
  it('takes the provider totals (cached inside input, reasoning inside output) and sums parts only when a total is missing', () => {
    expect(tokenCountsOf(usage(1200, 300, { cacheRead: 200, reasoning: 100 }))).toEqual({ input: 1200, output: 300, cacheRead: 200, cacheWrite: 0 });
    expect(
      tokenCountsOf({
        inputTokens: { total: undefined, noCache: 50, cacheRead: 30, cacheWrite: 20 },
        outputTokens: { total: undefined, text: 7, reasoning: 5 },
      }),
    ).toEqual({ input: 100, output: 12, cacheRead: 30, cacheWrite: 20 });
    expect(tokenCountsOf({ inputTokens: 40, outputTokens: 2, cachedInputTokens: 10 })).toEqual({ input: 40, output: 2, cacheRead: 10, cacheWrite: 0 });
    expect(tokenCountsOf(undefined)).toBeUndefined();
    expect(tokenCountsOf({ inputTokens: { total: 5 }, outputTokens: {} })).toBeUndefined();
  });
});
