import { Agent, Runner, setTracingDisabled, tool, Usage, type Model, type ModelRequest, type ModelResponse } from '@openai/agents';
import { expect } from 'vitest';
import { z } from 'zod';

import { meterModel, meterTools } from '../../src/adapters/openai-agents/index.js';
import type { ActiveRun } from '../../src/adapters/active-run.js';
import { RunBudgetExhaustedError, RunWithheldError } from '../../src/adapters/run-errors.js';
import { withRun } from '../../src/adapters/with-run.js';
import type { Plane } from '../../src/plane/plane.js';
import { booksOf, OPS, PRICE, REFUND, standardQuota } from './run-fixtures.js';

setTracingDisabled(true);

type StreamEvent = ReturnType<Model['getStreamedResponse']> extends AsyncIterable<infer E> ? E : never;

export const MODEL_NAME = 'gpt-test';
export const PRICES = { [MODEL_NAME]: PRICE };
export const BUDGET = { maxTokens: 10_000, maxCallTokens: 2_000, maxMinorUnits: 100_000, maxCallMinorUnits: 20_000 };

/** An Agents SDK usage report; `cached` and `reasoning` are parts of the input and output, as OpenAI reports them. */
export function usage(input: number, output: number, parts: { cached?: number; reasoning?: number } = {}): Usage {
  return new Usage({
    requests: 1,
    inputTokens: input,
    outputTokens: output,
    totalTokens: input + output,
    inputTokensDetails: { cached_tokens: parts.cached ?? 0 },
    outputTokensDetails: { reasoning_tokens: parts.reasoning ?? 0 },
  });
}

/** What a usage report costs at PRICE in micro-USD, worked out by hand, rounded up. */
export function priceOf(input: number, output: number, cached = 0): number {
  return Math.ceil(((input - cached) * 3_000_000 + cached * 300_000 + output * 15_000_000) / 1_000_000);
}

export function message(text: string, used: Usage): ModelResponse {
  return {
    usage: used,
    output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] }],
  };
}

export function functionCall(callId: string, name: string, input: unknown, used: Usage): ModelResponse {
  return { usage: used, output: [{ type: 'function_call', callId, name, arguments: JSON.stringify(input), status: 'completed' }] };
}

/**
 * A fake `Model` (the Agents SDK's model interface, as its own tests fake it): answers a script of
 * responses in turn and records every request. Streaming yields `response_started`, one text
 * delta per word of the response's messages (`delayMs` apart), then `response_done`.
 */
export class FakeModel implements Model {
  readonly requests: ModelRequest[] = [];
  private calls = 0;

  constructor(
    private readonly script: ((call: number) => ModelResponse | Promise<ModelResponse>)[],
    private readonly delayMs = 0,
  ) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const step = this.script[this.calls];
    this.calls += 1;
    if (step === undefined) throw new Error(`the fake model was called ${this.calls} times; the script has ${this.script.length}`);
    return step(this.calls);
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const response = await this.getResponse(request);
    yield { type: 'response_started' };
    const words = response.output.flatMap((item) =>
      item.type === 'message' && item.role === 'assistant' ? item.content.flatMap((part) => (part.type === 'output_text' ? part.text.split(' ') : [])) : [],
    );
    for (const word of words) {
      await new Promise((resolve) => setTimeout(resolve, this.delayMs));
      yield { type: 'output_text_delta', delta: `${word} ` };
    }
    yield { type: 'response_done', response: { id: `resp-${this.calls}`, usage: response.usage, output: response.output } } as StreamEvent;
  }
}

/** The refund tool, metered: each call is a dispatch of REFUND (2 per minute in the standard quota). */
export function refundTools(run: ActiveRun, executed: string[]) {
  const refund = tool({
    name: 'refund',
    description: 'refund an order',
    parameters: z.object({ order: z.string() }),
    execute: async ({ order }) => {
      executed.push(order);
      return `refunded ${order}`;
    },
  });
  return meterTools(run, [refund], { grants: { refund: REFUND } });
}

export function agentOf(run: ActiveRun, model: Model, executed: string[] = []): Agent {
  return new Agent({
    name: 'refunds',
    instructions: 'Refund what you are asked to.',
    model: meterModel(run, model, { modelName: MODEL_NAME, prices: PRICES }),
    modelSettings: { maxTokens: 4_096 },
    tools: refundTools(run, executed),
  });
}

const runner = new Runner({ tracingDisabled: true });

/** One Agents SDK scenario: it drives the plane (in process or a client), asserts, and answers the tenant's books. */
export interface AgentsScenario {
  readonly name: string;
  run(plane: Plane): Promise<unknown>;
}

export const OPENAI_AGENTS_SCENARIOS: readonly AgentsScenario[] = [
  {
    name: "a run's settled spend is the sum of the fake model's usage over its turns (cached and reasoning tokens counted once)",
    async run(plane) {
      await standardQuota(plane, 'acme');
      const executed: string[] = [];
      const model = new FakeModel([
        () => functionCall('call-1', 'refund', { order: 'A-1' }, usage(1200, 300, { cached: 200, reasoning: 100 })),
        () => message('done', usage(1500, 100)),
      ]);
      const done = await withRun(plane, { tenant: 'acme', run: 'run-sum', budget: BUDGET }, async (run) => {
        const result = await runner.run(agentOf(run, model, executed), 'refund A-1', { signal: run.signal });
        return { output: result.finalOutput, usage: result.state.usage };
      });
      expect(done.ok).toBe(true);
      if (!done.ok) return undefined;
      expect(executed).toEqual(['A-1']);
      expect(done.value.output).toBe('done');
      // The SDK's own total of the fake's reports, and ours, agree.
      expect(done.spend.tokens).toBe(done.value.usage.totalTokens);
      expect(done.spend).toEqual({ tokens: 1500 + 1600, minorUnits: priceOf(1200, 300, 200) + priceOf(1500, 100) });
      expect(done.estimated).toBe(false);
      const books = await booksOf(plane, 'acme');
      expect(books).toMatchObject({ usage: { spent: done.spend, reserved: { tokens: 0, minorUnits: 0 }, running: 0 } });
      return books;
    },
  },
  {
    name: 'a turn is capped to the per-call bound, then to what the budget has left; with nothing left the model is not called',
    async run(plane) {
      await standardQuota(plane, 'acme');
      const model = new FakeModel([() => message('one', usage(1000, 500)), () => message('two', usage(500, 500))]);
      const budget = { ...BUDGET, maxTokens: 2_500, maxCallMinorUnits: 100_000 };
      const outcome = await withRun(plane, { tenant: 'acme', run: 'run-cap', budget }, async (run) => {
        const agent = agentOf(run, model);
        await runner.run(agent, 'first');
        await runner.run(agent, 'second');
        return runner.run(agent, 'third').then(
          () => 'called',
          (error: unknown) => error,
        );
      });
      expect(model.requests.map((request) => request.modelSettings.maxTokens)).toEqual([2_000, 1_000]);
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
      const model = new FakeModel([
        () => functionCall('call-1', 'refund', { order: 'A-1' }, usage(100, 10)),
        () => functionCall('call-2', 'refund', { order: 'A-2' }, usage(100, 10)),
        () => functionCall('call-3', 'refund', { order: 'A-3' }, usage(100, 10)),
        () => message('two of three refunded', usage(100, 10)),
      ]);
      const done = await withRun(plane, { tenant: 'acme', run: 'run-rate', budget: BUDGET }, (run) =>
        runner.run(agentOf(run, model, executed), 'refund three', { signal: run.signal }),
      );
      expect(done.ok).toBe(true);
      if (!done.ok) return undefined;
      expect(executed).toEqual(['A-1', 'A-2']);
      expect(done.value.finalOutput).toBe('two of three refunded');
      // The refusal went back to the model as the third call's output.
      expect(JSON.stringify(model.requests[3]?.input)).toMatch(/tool 'refund' was not run: .*2 per 60 s.*retry after 2026-01-05T08:01:00\.000Z/);
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
      const model = new FakeModel([() => message('partial', usage(1000, 500))]);
      const thrown = await withRun(counting, { tenant: 'acme', run: 'run-throw', budget: BUDGET }, async (run) => {
        await runner.run(agentOf(run, model), 'go');
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
    name: 'an abort mid-stream settles what was used: the finished turn, and the per-call bound of the cut stream',
    async run(plane) {
      await standardQuota(plane, 'acme');
      const model = new FakeModel([() => message('first', usage(1000, 500)), () => message('one two three four', usage(300, 300))], 20);
      const abort = new AbortController();
      const thrown = await withRun(plane, { tenant: 'acme', run: 'run-abort', budget: BUDGET, signal: abort.signal }, async (run) => {
        const agent = agentOf(run, model);
        await runner.run(agent, 'first');
        const streamed = await runner.run(agent, 'second', { stream: true, signal: run.signal });
        for await (const event of streamed) {
          if (event.type === 'raw_model_stream_event' && event.data.type === 'output_text_delta') abort.abort(new Error('the user closed the page'));
        }
        run.throwIfStopped();
        return 'not reached';
      }).catch((error: unknown) => error);
      expect(thrown).toEqual(new Error('the user closed the page'));
      const books = await booksOf(plane, 'acme');
      expect(books).toMatchObject({
        usage: { spent: { tokens: 1_500 + 2_000, minorUnits: priceOf(1000, 500) + 20_000 }, reserved: { tokens: 0, minorUnits: 0 }, running: 0 },
        runs: [{ run: 'run-abort', status: 'concluded' }],
      });
      return books;
    },
  },
  {
    name: 'a subject halt thrown mid-run stops the agent before its next turn; the pass settles unconcluded and resumes after the lift',
    async run(plane) {
      await standardQuota(plane, 'acme');
      const model = new FakeModel([
        async () => {
          // While the model thinks, an operator withdraws alice's authority.
          await plane.halt({ tenant: 'acme', scope: 'subject:alice', reason: 'credential leaked', by: OPS });
          return functionCall('call-1', 'lookup', { order: 'A-1' }, usage(1000, 200));
        },
        () => message('never', usage(1, 1)),
      ]);
      const looked: string[] = [];
      const thrown = await withRun(plane, { tenant: 'acme', run: 'run-halt', chain: ['alice'], budget: BUDGET }, (run) => {
        // A tool with no grant: it runs, and the halt is met at the next turn's heartbeat.
        const lookup = tool({ name: 'lookup', description: 'look an order up', parameters: z.object({ order: z.string() }), execute: async ({ order }) => (looked.push(order), 'found') });
        const agent = new Agent({ name: 'refunds', model: meterModel(run, model, { modelName: MODEL_NAME, prices: PRICES }), tools: meterTools(run, [lookup], { grants: {} }) });
        return runner.run(agent, 'look A-1 up', { signal: run.signal });
      }).catch((error: unknown) => error);
      expect(thrown).toBeInstanceOf(RunWithheldError);
      const withheld = thrown as RunWithheldError;
      expect(withheld).toMatchObject({ run: 'run-halt', epoch: 1, refusal: { code: 'Withheld', subject: 'alice' }, spend: { tokens: 1_200 } });
      expect(withheld.settle?.receipt).toMatchObject({ concludes: false, spend: { tokens: 1_200, minorUnits: priceOf(1000, 200) } });
      expect(looked).toEqual(['A-1']);
      expect(model.requests).toHaveLength(1);
      const paused = await booksOf(plane, 'acme');
      expect(paused).toMatchObject({ usage: { spent: { tokens: 1_200 }, running: 0 }, runs: [{ run: 'run-halt', status: 'withheld' }] });

      await plane.lift({ tenant: 'acme', scope: 'subject:alice', by: OPS });
      const resumedModel = new FakeModel([() => message('resumed', usage(400, 100))]);
      const resumed = await withRun(plane, { tenant: 'acme', resume: 'run-halt', budget: BUDGET, spentBefore: withheld.spend }, (run) =>
        runner.run(agentOf(run, resumedModel), 'continue'),
      );
      expect(resumed).toMatchObject({ ok: true, run: 'run-halt', epoch: 2, spend: { tokens: 500 } });
      return { paused, finished: await booksOf(plane, 'acme') };
    },
  },
  {
    name: 'a subject halt thrown mid-run stops the agent at its next granted tool call',
    async run(plane) {
      await standardQuota(plane, 'acme');
      const executed: string[] = [];
      const model = new FakeModel([
        async () => {
          await plane.halt({ tenant: 'acme', scope: 'subject:alice', reason: 'credential leaked', by: OPS });
          return functionCall('call-1', 'refund', { order: 'A-1' }, usage(1000, 200));
        },
        () => message('never', usage(1, 1)),
      ]);
      const thrown = await withRun(plane, { tenant: 'acme', run: 'run-halt-tool', chain: ['alice'], budget: BUDGET }, (run) =>
        runner.run(agentOf(run, model, executed), 'refund A-1', { signal: run.signal }),
      ).catch((error: unknown) => error);
      expect(thrown).toBeInstanceOf(RunWithheldError);
      expect((thrown as RunWithheldError).settle?.receipt).toMatchObject({ concludes: false, spend: { tokens: 1_200 } });
      expect(executed).toEqual([]);
      expect(model.requests).toHaveLength(1);
      return booksOf(plane, 'acme');
    },
  },
];
