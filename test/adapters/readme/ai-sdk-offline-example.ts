import { createPlane, openStore, withRun } from '../../../src/index.js';
import { quotaMiddleware } from '../../../src/adapters/ai-sdk/index.js';
import { generateText, wrapLanguageModel } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';

export async function meteredWithoutANetwork() {
  const store = await openStore('sqlite::memory:'); // private to this test, gone on close
  const plane = createPlane({ store });
  await plane.setQuota('acme', { maxConcurrentRuns: 1, maxTokensPerPeriod: 100_000 }, { newTenant: true });
  const model = new MockLanguageModelV3({
    modelId: 'test-model',
    doGenerate: async () => ({
      content: [{ type: 'text', text: 'done' }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: {
        inputTokens: { total: 120, noCache: 120, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 30, text: 30, reasoning: 0 },
      },
      warnings: [],
    }),
  });
  const prices = { 'test-model': { inputPerMillion: 0, outputPerMillion: 0 } };

  const done = await withRun(plane, { tenant: 'acme', budget: { maxTokens: 2_000, maxCallTokens: 500 } }, async (run) => {
    const { text } = await generateText({
      model: wrapLanguageModel({ model, middleware: quotaMiddleware(run, { prices }) }),
      abortSignal: run.signal,
      prompt: 'Say done',
    });
    return text;
  });
  const usage = await plane.usage({ tenant: 'acme' });
  await store.close();
  return { done, usage }; // done.spend.tokens and usage.spent.tokens are 150 (120 in + 30 out)
}
