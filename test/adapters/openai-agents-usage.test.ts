import { Agent, Runner, Usage } from '@openai/agents';
import { afterEach, describe, expect, it } from 'vitest';

import { agentsTokenCounts, meterModel, meterModelProvider } from '../../src/adapters/openai-agents/index.js';
import { withRun } from '../../src/adapters/with-run.js';
import { QuotaError } from '../../src/core/errors.js';
import { BUDGET, FakeModel, message, MODEL_NAME, priceOf, PRICES, usage } from './openai-agents-scenarios.js';
import { planeTarget, standardQuota, type Target } from './run-fixtures.js';

// For the Agents SDK: the usage a turn books (docs/design/decisions.md "Usage never reads as zero
// by absence").

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

const runner = new Runner({ tracingDisabled: true });
const retryOnce = { maxRetries: 1, backoff: { initialDelayMs: 1, maxDelayMs: 1, jitter: false }, policy: () => true };

describe('quotaplane/openai-agents usage', () => {
  it('a turn whose provider reported no usage (the SDK then reports zeros) books its per-call bound, marked as an estimate', async () => {
    const { plane } = await acme();
    const model = new FakeModel([() => message('hi', new Usage())]);
    const done = await withRun(plane, { tenant: 'acme', budget: BUDGET }, (run) =>
      runner.run(new Agent({ name: 'a', model: meterModel(run, model, { modelName: MODEL_NAME, prices: PRICES }) }), 'hi'),
    );
    expect(done).toMatchObject({ ok: true, spend: { tokens: 2_000, minorUnits: 20_000 }, estimated: true });
  });

  it('a failed attempt that the Runner retries adds nothing; a turn that finally fails books one per-call bound', async () => {
    const { plane } = await acme();
    const failing = () => {
      throw Object.assign(new Error('overloaded'), { status: 503 });
    };
    const lucky = new FakeModel([failing, () => message('second time lucky', usage(900, 100))]);
    const done = await withRun(plane, { tenant: 'acme', budget: BUDGET }, (run) =>
      runner.run(new Agent({ name: 'a', model: meterModel(run, lucky, { modelName: MODEL_NAME, prices: PRICES }), modelSettings: { retry: retryOnce } }), 'hi'),
    );
    expect(lucky.requests).toHaveLength(2);
    expect(done).toMatchObject({ ok: true, spend: { tokens: 1_000, minorUnits: priceOf(900, 100) }, estimated: false });

    const unlucky = new FakeModel([failing, failing]);
    const thrown = await withRun(plane, { tenant: 'acme', budget: BUDGET }, (run) =>
      runner.run(new Agent({ name: 'a', model: meterModel(run, unlucky, { modelName: MODEL_NAME, prices: PRICES }), modelSettings: { retry: retryOnce } }), 'hi'),
    ).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(Error);
    expect(unlucky.requests).toHaveLength(2);
    expect((await plane.usage({ tenant: 'acme' })).spent).toEqual({ tokens: 1_000 + 2_000, minorUnits: priceOf(900, 100) + 20_000 });
  });

  it('meterModelProvider meters every model the Runner asks it for, priced by the agent’s model name', async () => {
    const { plane } = await acme();
    const model = new FakeModel([() => message('hi', usage(1000, 100))]);
    const asked: (string | undefined)[] = [];
    const provider = { getModel: (name?: string) => (asked.push(name), model) };
    const done = await withRun(plane, { tenant: 'acme', budget: BUDGET }, (run) =>
      new Runner({ tracingDisabled: true, modelProvider: meterModelProvider(run, provider, { prices: PRICES }) }).run(new Agent({ name: 'a', model: MODEL_NAME }), 'hi'),
    );
    expect(asked).toEqual([MODEL_NAME]);
    expect(model.requests[0]?.modelSettings.maxTokens).toBe(1_333);
    expect(done).toMatchObject({ ok: true, spend: { tokens: 1_100, minorUnits: priceOf(1000, 100) }, estimated: false });
  });

  it('a run that bounds money needs the model’s name to price it', async () => {
    const { plane } = await acme();
    const thrown = await withRun(plane, { tenant: 'acme', budget: BUDGET }, async (run) => meterModel(run, new FakeModel([]))).catch((error: unknown) => error);
    expect((thrown as QuotaError).details.field).toBe('modelName');
  });

  it('agentsTokenCounts takes OpenAI’s totals (cached inside input, reasoning inside output), per record or per request', () => {
    expect(agentsTokenCounts(usage(1200, 300, { cached: 200, reasoning: 100 }))).toEqual({ input: 1200, output: 300, cacheRead: 200, cacheWrite: 0 });
    expect(agentsTokenCounts({ inputTokens: 50, outputTokens: 5, inputTokensDetails: [{ cached_tokens: 10 }, { cached_tokens: 15 }] })).toEqual({
      input: 50,
      output: 5,
      cacheRead: 25,
      cacheWrite: 0,
    });
    expect(agentsTokenCounts({ input_tokens: 8, output_tokens: 2 })).toEqual({ input: 8, output: 2, cacheRead: 0, cacheWrite: 0 });
    expect(agentsTokenCounts({ inputTokens: Number.NaN, outputTokens: 2 })).toBeUndefined();
    expect(agentsTokenCounts(new Usage())).toBeUndefined();
  });
});
