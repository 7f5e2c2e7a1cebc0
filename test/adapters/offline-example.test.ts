import { describe, expect, it } from 'vitest';

import { meteredWithoutANetwork } from './readme/ai-sdk-offline-example.js';

// The example of docs/guides/metering-agents.md, "Testing without a network", run as printed.
describe('the offline metering example', () => {
  it('books the mock model’s usage: 120 input + 30 output tokens, settled and concluded', async () => {
    const { done, usage } = await meteredWithoutANetwork();
    expect(done.ok).toBe(true);
    if (!done.ok) return;
    expect(done.value).toBe('done');
    expect(done.spend.tokens).toBe(150);
    expect(done.estimated).toBe(false);
    expect(usage.spent.tokens).toBe(150);
    expect(usage.running).toBe(0);
    expect(usage.reserved.tokens).toBe(0);
  });
});
