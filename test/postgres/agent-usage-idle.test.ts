import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openStorePair, type StorePair } from './pg-test-support.js';

// An agent with nothing settled or held in a period reads zero on both stores (store.ts
// `agentUsage`): PostgreSQL's least(NULL, bound) is the bound, not NULL, so a period without a row
// must not read as 2^53 − 1 reserved.

const BY = { actor: 'usage-test', basis: 'asserted' } as const;
const T = Date.UTC(2026, 11, 1, 12);

let pair: StorePair;

beforeAll(async () => {
  pair = await openStorePair('agent_usage');
});

afterAll(async () => {
  await pair?.close();
});

describe.each(['sqlite', 'postgres'])('%s', (backend) => {
  it('an agent with no spend row in the period reads nothing settled and nothing reserved', async () => {
    const acme = pair.stores[backend as 'sqlite' | 'postgres'].tenant('acme');
    await acme.setQuota(
      { period: 'monthly', maxConcurrentRuns: 3, agents: { bot: { maxConcurrentRuns: 2 } } },
      { atMs: T, by: BY, action: 'quota.set', subject: 'quota', detail: {} },
    );
    expect(await acme.agentUsage!(['bot', 'never-seen'], '2026-12')).toEqual([
      { agent: 'bot', running: 0, period: '2026-12', settled: { tokens: 0, minorUnits: 0 }, reserved: { tokens: 0, minorUnits: 0 } },
      { agent: 'never-seen', running: 0, period: '2026-12', settled: { tokens: 0, minorUnits: 0 }, reserved: { tokens: 0, minorUnits: 0 } },
    ]);
  });
});
