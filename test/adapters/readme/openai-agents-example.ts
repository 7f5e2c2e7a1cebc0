import { createPlane, openStore, withRun } from '../../../src/index.js';
import { meterModelProvider, meterTools } from '../../../src/adapters/openai-agents/index.js';
import { Agent, OpenAIProvider, Runner, tool } from '@openai/agents';
import { z } from 'zod';

const plane = createPlane({ store: await openStore('sqlite:./quotaplane.db') }); // or createClient({ url, key })
const prices = { 'gpt-4o-mini': { inputPerMillion: 150_000, outputPerMillion: 600_000 } }; // micro-USD
const refund = tool({
  name: 'refund',
  description: 'Refund an order',
  parameters: z.object({ order: z.string() }),
  execute: async ({ order }) => `refunded ${order}`,
});

const done = await withRun(plane, { tenant: 'acme', chain: ['alice'], budget: { maxTokens: 20_000, maxCallTokens: 4_000 } }, async (run) => {
  const agent = new Agent({
    name: 'refunds',
    model: 'gpt-4o-mini',
    tools: meterTools(run, [refund], { grants: { refund: { grant: 'tool://payments/refund', ceilings: [{ count: 2, windowSeconds: 60 }] } } }),
  });
  const runner = new Runner({ modelProvider: meterModelProvider(run, new OpenAIProvider(), { prices }) });
  const result = await runner.run(agent, 'Refund orders A-1, A-2 and A-3', { signal: run.signal });
  return result.finalOutput;
});
if (done.ok) console.log(done.value, done.spend); // settled and concluded
else console.log(done.refusal.code, done.message); // not admitted: TooManyRuns, SpentOut, Halted …
