import { generateText, stepCountIs, streamText, tool, wrapLanguageModel, type LanguageModel, type ToolSet } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { expect } from 'vitest';
import { z } from 'zod';

import { meterTools, quotaMiddleware } from '../../src/adapters/ai-sdk/index.js';
import type { ActiveRun } from '../../src/adapters/active-run.js';
import { RunBudgetExhaustedError, RunWithheldError } from '../../src/adapters/run-errors.js';
import { withRun } from '../../src/adapters/with-run.js';
import type { Plane } from '../../src/plane/plane.js';
import { booksOf, OPS, PRICE, REFUND, standardQuota } from './run-fixtures.js';

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>;
type Usage = GenerateResult['usage'];
type StreamPart = Awaited<ReturnType<MockLanguageModelV3['doStream']>>['stream'] extends ReadableStream<infer P> ? P : never;

export const MODEL_ID = 'gpt-test';
export const PRICES = { [MODEL_ID]: PRICE };
export const BUDGET = { maxTokens: 10_000, maxCallTokens: 2_000, maxMinorUnits: 100_000, maxCallMinorUnits: 20_000 };

/** A V3 usage report; `cacheRead` and `reasoning` are parts of the totals, as providers report them. */
export function usage(input: number, output: number, parts: { cacheRead?: number; reasoning?: number } = {}): Usage {
  const cacheRead = parts.cacheRead ?? 0;
  const reasoning = parts.reasoning ?? 0;
  return {
    inputTokens: { total: input, noCache: input - cacheRead, cacheRead, cacheWrite: 0 },
    outputTokens: { total: output, text: output - reasoning, reasoning },
  };
}

/** What a usage report costs at PRICE in micro-USD, worked out by hand (cache reads at $0.30, the rest at $3, output at $15), rounded up. */
export function priceOf(input: number, output: number, cacheRead = 0): number {
  return Math.ceil(((input - cacheRead) * 3_000_000 + cacheRead * 300_000 + output * 15_000_000) / 1_000_000);
}

export function text(value: string, used: Usage): GenerateResult {
  return { content: [{ type: 'text', text: value }], finishReason: { unified: 'stop', raw: 'stop' }, usage: used, warnings: [] };
}

export function toolCall(id: string, name: string, input: unknown, used: Usage): GenerateResult {
  return {
    content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: used,
    warnings: [],
  };
}

/** A mock model that answers `answers` in turn, one per call. */
export function scriptedModel(answers: ((call: number) => GenerateResult | Promise<GenerateResult>)[]): MockLanguageModelV3 {
  let calls = 0;
  return new MockLanguageModelV3({
    modelId: MODEL_ID,
    doGenerate: async () => {
      const answer = answers[calls];
      calls += 1;
      if (answer === undefined) throw new Error(`the mock model was called ${calls} times; the script has ${answers.length}`);
      return answer(calls);
    },
  });
}

export function metered(run: ActiveRun, model: MockLanguageModelV3): LanguageModel {
  return wrapLanguageModel({ model, middleware: quotaMiddleware(run, { prices: PRICES }) });
}

/** The refund tool, metered: each call is a dispatch of REFUND (2 per minute in the standard quota). */
export function refundTools(run: ActiveRun, executed: string[]): ToolSet {
  const refund = tool({
    description: 'refund an order',
    inputSchema: z.object({ order: z.string() }),
    execute: async ({ order }) => {
      executed.push(order);
      return `refunded ${order}`;
    },
  });
  return meterTools(run, { refund }, { grants: { refund: REFUND } });
}

/** One AI SDK scenario: it drives the plane (in process or a client), asserts, and answers the tenant's books. */
export interface AiScenario {
  readonly name: string;
  run(plane: Plane): Promise<unknown>;
}

export const AI_SDK_SCENARIOS: readonly AiScenario[] = [
  {
    name: "a run's settled spend is the sum of the mock's usage over a multi-step call with a tool round (cached and reasoning tokens counted once)",
    async run(plane) {
      await standardQuota(plane, 'acme');
      const executed: string[] = [];
      const model = scriptedModel([
        () => toolCall('call-1', 'refund', { order: 'A-1' }, usage(1200, 300, { cacheRead: 200, reasoning: 100 })),
        () => text('done', usage(1500, 100)),
      ]);
      const done = await withRun(plane, { tenant: 'acme', run: 'run-sum', budget: BUDGET }, async (run) => {
        const result = await generateText({ model: metered(run, model), tools: refundTools(run, executed), stopWhen: stepCountIs(3), prompt: 'refund A-1', abortSignal: run.signal });
        return result.totalUsage;
      });
      expect(done.ok).toBe(true);
      if (!done.ok) return undefined;
      expect(executed).toEqual(['A-1']);
      // The SDK's own total of the mock's reports, and ours, agree.
      expect(done.spend.tokens).toBe((done.value.inputTokens ?? NaN) + (done.value.outputTokens ?? NaN));
      expect(done.spend).toEqual({ tokens: 1500 + 1600, minorUnits: priceOf(1200, 300, 200) + priceOf(1500, 100) });
      expect(done.estimated).toBe(false);
      expect(done.settle.receipt).toMatchObject({ concludes: true, spend: done.spend });
      const books = await booksOf(plane, 'acme');
      expect(books).toMatchObject({ usage: { spent: done.spend, reserved: { tokens: 0, minorUnits: 0 }, running: 0 } });
      return books;
    },
  },
  {
    name: 'a call is capped to the per-call bound, then to what the budget has left; with nothing left the model is not called',
    async run(plane) {
      await standardQuota(plane, 'acme');
      const model = scriptedModel([() => text('one', usage(1000, 500)), () => text('two', usage(500, 500))]);
      const budget = { ...BUDGET, maxTokens: 2_500, maxCallMinorUnits: 100_000 };
      const outcome = await withRun(plane, { tenant: 'acme', run: 'run-cap', budget }, async (run) => {
        const wrapped = metered(run, model);
        await generateText({ model: wrapped, prompt: 'first', maxOutputTokens: 4_096, maxRetries: 0 });
        await generateText({ model: wrapped, prompt: 'second', maxOutputTokens: 4_096, maxRetries: 0 });
        return generateText({ model: wrapped, prompt: 'third', maxOutputTokens: 4_096, maxRetries: 0 }).then(
          () => 'called',
          (error: unknown) => error,
        );
      });
      // The first call may produce the per-call bound (2 000), the second only the 1 000 left.
      expect(model.doGenerateCalls.map((call) => call.maxOutputTokens)).toEqual([2_000, 1_000]);
      expect(outcome.ok).toBe(true);
      if (!outcome.ok) return undefined;
      expect(outcome.value).toBeInstanceOf(RunBudgetExhaustedError);
      expect(outcome.spend).toEqual({ tokens: 2_500, minorUnits: priceOf(1000, 500) + priceOf(500, 500) });
      return booksOf(plane, 'acme');
    },
  },
  {
    name: 'a rate-ceilinged tool is refused on its third call within the window, and the model sees when to retry',
    async run(plane) {
      await standardQuota(plane, 'acme');
      const executed: string[] = [];
      const model = scriptedModel([
        () => toolCall('call-1', 'refund', { order: 'A-1' }, usage(100, 10)),
        () => toolCall('call-2', 'refund', { order: 'A-2' }, usage(100, 10)),
        () => toolCall('call-3', 'refund', { order: 'A-3' }, usage(100, 10)),
        () => text('two of three refunded', usage(100, 10)),
      ]);
      const done = await withRun(plane, { tenant: 'acme', run: 'run-rate', budget: BUDGET }, (run) =>
        generateText({ model: metered(run, model), tools: refundTools(run, executed), stopWhen: stepCountIs(5), prompt: 'refund three', abortSignal: run.signal }),
      );
      expect(done.ok).toBe(true);
      if (!done.ok) return undefined;
      expect(executed).toEqual(['A-1', 'A-2']);
      const errors = done.value.steps.flatMap((step) => step.content).filter((part) => part.type === 'tool-error');
      expect(errors).toHaveLength(1);
      expect(String((errors[0] as { error: unknown }).error)).toMatch(/tool 'refund' was not run: .*2 per 60 s.*retry after 2026-01-05T08:01:00\.000Z/);
      // The refusal went back to the model in the next step's prompt.
      expect(JSON.stringify(model.doGenerateCalls[3]?.prompt)).toContain("tool 'refund' was not run");
      expect(done.spend.tokens).toBe(4 * 110);
      return booksOf(plane, 'acme');
    },
  },
  {
    name: 'a body that throws settles once, concluding with what it used, and the error comes out',
    async run(plane) {
      await standardQuota(plane, 'acme');
      let settles = 0;
      const counting: Plane = { ...plane, settle: (input) => ((settles += 1), plane.settle(input)) };
      const model = scriptedModel([() => text('partial', usage(1000, 500))]);
      const thrown = await withRun(counting, { tenant: 'acme', run: 'run-throw', budget: BUDGET }, async (run) => {
        await generateText({ model: metered(run, model), prompt: 'go' });
        throw new Error('the agent failed');
      }).catch((error: unknown) => error);
      expect(thrown).toEqual(new Error('the agent failed'));
      expect(settles).toBe(1);
      const books = await booksOf(plane, 'acme');
      expect(books).toMatchObject({ usage: { spent: { tokens: 1_500, minorUnits: priceOf(1000, 500) }, reserved: { tokens: 0, minorUnits: 0 }, running: 0 }, runs: [{ run: 'run-throw', status: 'concluded' }] });
      return books;
    },
  },
  {
    name: 'an abort mid-stream settles what was used: the finished call, and the per-call bound of the cut stream',
    async run(plane) {
      await standardQuota(plane, 'acme');
      const streamParts: StreamPart[] = [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'one ' },
        { type: 'text-delta', id: 't', delta: 'two ' },
        { type: 'text-delta', id: 't', delta: 'three' },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(300, 300) },
      ];
      const model = new MockLanguageModelV3({
        modelId: MODEL_ID,
        doGenerate: async () => text('first', usage(1000, 500)),
        doStream: async () => ({ stream: simulateReadableStream({ chunks: streamParts, chunkDelayInMs: 20 }) }),
      });
      const abort = new AbortController();
      const thrown = await withRun(plane, { tenant: 'acme', run: 'run-abort', budget: BUDGET, signal: abort.signal }, async (run) => {
        const wrapped = metered(run, model);
        await generateText({ model: wrapped, prompt: 'first' });
        const streamed = streamText({ model: wrapped, prompt: 'second', abortSignal: run.signal });
        for await (const delta of streamed.textStream) {
          if (delta.length > 0) abort.abort(new Error('the user closed the page'));
        }
        run.throwIfStopped();
        return 'not reached';
      }).catch((error: unknown) => error);
      expect(thrown).toEqual(new Error('the user closed the page'));
      const books = await booksOf(plane, 'acme');
      // 1 500 reported, plus the cut stream's per-call bound (2 000 tokens, 20 000 micro-USD).
      expect(books).toMatchObject({
        usage: { spent: { tokens: 1_500 + 2_000, minorUnits: priceOf(1000, 500) + 20_000 }, reserved: { tokens: 0, minorUnits: 0 }, running: 0 },
        runs: [{ run: 'run-abort', status: 'concluded' }],
      });
      return books;
    },
  },
  {
    name: 'a subject halt thrown mid-run stops the agent at its next tool call; the pass settles unconcluded and resumes after the lift',
    async run(plane) {
      await standardQuota(plane, 'acme');
      const executed: string[] = [];
      const model = scriptedModel([
        async () => {
          // While the model thinks, an operator withdraws alice's authority.
          await plane.halt({ tenant: 'acme', scope: 'subject:alice', reason: 'credential leaked', by: OPS, newTenant: true });
          return toolCall('call-1', 'refund', { order: 'A-1' }, usage(1000, 200));
        },
        () => text('never', usage(1, 1)),
      ]);
      const thrown = await withRun(plane, { tenant: 'acme', run: 'run-halt', chain: ['alice'], budget: BUDGET }, (run) =>
        generateText({ model: metered(run, model), tools: refundTools(run, executed), stopWhen: stepCountIs(3), prompt: 'refund', abortSignal: run.signal }),
      ).catch((error: unknown) => error);
      expect(thrown).toBeInstanceOf(RunWithheldError);
      const withheld = thrown as RunWithheldError;
      expect(withheld).toMatchObject({ run: 'run-halt', epoch: 1, refusal: { code: 'Withheld', subject: 'alice' }, spend: { tokens: 1_200 } });
      expect(withheld.settle?.receipt).toMatchObject({ concludes: false, spend: { tokens: 1_200, minorUnits: priceOf(1000, 200) } });
      expect(executed).toEqual([]);
      expect(model.doGenerateCalls).toHaveLength(1);
      const paused = await booksOf(plane, 'acme');
      expect(paused).toMatchObject({ usage: { spent: { tokens: 1_200 }, running: 0 }, runs: [{ run: 'run-halt', status: 'withheld' }] });

      await plane.lift({ tenant: 'acme', scope: 'subject:alice', by: OPS });
      const resumedModel = scriptedModel([() => text('resumed', usage(400, 100))]);
      const resumed = await withRun(plane, { tenant: 'acme', resume: 'run-halt', budget: BUDGET, spentBefore: withheld.spend }, (run) =>
        generateText({ model: metered(run, resumedModel), prompt: 'continue' }),
      );
      expect(resumed).toMatchObject({ ok: true, run: 'run-halt', epoch: 2, spend: { tokens: 500 } });
      return { paused, finished: await booksOf(plane, 'acme') };
    },
  },
];
