// Both stores answer a waiter asked again with a different request the same way: CONFLICT, with the
// queue, its grant and the books as they were (docs/design/rules.md#l13-1).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { QuotaStore, TenantStore } from '../../src/store/store.js';
import { openStorePair, type StorePair } from './pg-test-support.js';

const BY = { actor: 'diff', basis: 'asserted' } as const;
const BUDGET = { maxTokens: 500, maxCallTokens: 500, maxMinorUnits: 20, maxCallMinorUnits: 20 };
const AGENT = { name: 'bot', digest: 'ab'.repeat(32) };
const T = Date.UTC(2026, 11, 1, 12);

let pair: StorePair;

beforeAll(async () => {
  pair = await openStorePair('repro');
});
afterAll(async () => {
  await pair?.close();
});

async function tenant(store: QuotaStore, name: string): Promise<TenantStore> {
  const t = store.tenant(name);
  await t.setQuota({ period: 'monthly', maxConcurrentRuns: 1 }, { atMs: T, by: BY, action: 'quota.set', subject: 'quota', detail: {} });
  return t;
}

describe.each(['sqlite', 'postgres'])('%s', (backend) => {
  it('L13.1 a waiting run asked again with another width is a conflict and changes nothing: its grant and place stay', async () => {
    const t = await tenant(pair.stores[backend as 'sqlite' | 'postgres'], 'w-conflict');
    const admit = (run: string, width: number, atMs: number) => ({ run, budget: BUDGET, width, atMs, leaseMs: 30_000, agent: AGENT });
    expect(await t.admit(admit('r1', 1, T))).toMatchObject({ ok: true });
    // r2 waits with width 2.
    expect(await t.admitOrWait(admit('r2', 2, T + 1), { untilMs: T + 10_000, leaseMs: 20_000 })).toMatchObject({ waiting: true });
    // The raw release frees r1's slot and grants nobody.
    await t.release('r1');
    // r2 asks again with another width: CONFLICT, and nothing changes.
    await expect(t.admitOrWait(admit('r2', 1, T + 2), { untilMs: T + 10_000, leaseMs: 20_000 })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect({ running: await t.running(), run: await t.getRun('r2'), queue: await t.waitQueue({ atMs: T + 3 }) }).toMatchObject({
      running: 0,
      run: null,
      queue: { depth: 1 },
    });
    // Its own request, asked again, collects the grant the conflict left in place.
    expect(await t.collectWaiter(admit('r2', 2, T + 4), { untilMs: T + 10_000, leaseMs: 20_000 })).toMatchObject({ ok: true, run: 'r2', epoch: 1 });
  });
});
