import { createPlane, openStore, withRun } from '../../../src/index.js';
import { meterTools, quotaMiddleware } from '../../../src/adapters/ai-sdk/index.js';
import { gateway, generateText, stepCountIs, tool, wrapLanguageModel } from 'ai';
import { z } from 'zod';

const plane = createPlane({ store: await openStore('sqlite:./quotaplane.db') }); // or createClient({ url, key })
const prices = { 'openai/gpt-4o-mini': { inputPerMillion: 150_000, outputPerMillion: 600_000 } }; // micro-USD
const refund = tool({
  description: 'Refund an order',
  inputSchema: z.object({ order: z.string() }),
  execute: async ({ order }) => `refunded ${order}`,
});

const done = await withRun(plane, { tenant: 'acme', chain: ['alice'], budget: { maxTokens: 20_000, maxCallTokens: 4_000 } }, async (run) => {
  const { text } = await generateText({
    model: wrapLanguageModel({ model: gateway('openai/gpt-4o-mini'), middleware: quotaMiddleware(run, { prices }) }),
    tools: meterTools(run, { refund }, { grants: { refund: { grant: 'tool://payments/refund', ceilings: [{ count: 2, windowSeconds: 60 }] } } }),
    stopWhen: stepCountIs(5),
    abortSignal: run.signal,
    prompt: 'Refund orders A-1, A-2 and A-3',
  });
  return text;
});
if (done.ok) console.log(done.value, done.spend); // settled and concluded
else console.log(done.refusal.code, done.message); // not admitted: TooManyRuns, SpentOut, Halted …
