import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { tempDir } from '../plane/plane-fixtures.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';

// An agent with nothing settled or held in a period reads zero on both stores (store.ts
// `agentUsage`): PostgreSQL's least(NULL, bound) is the bound, not NULL, so a period without a row
// must not read as 2^53 − 1 reserved.

const BY = { actor: 'usage-test', basis: 'asserted' } as const;
const T = Date.UTC(2026, 11, 1, 12);

let stores: Record<string, QuotaStore>;
let dir: { dir: string; remove(): void };
let url: string;
let schema: string;

beforeAll(async () => {
  dir = tempDir();
  url = testPgUrl();
  schema = freshSchemaName('agent_usage');
  stores = { sqlite: await openStore(`sqlite:${join(dir.dir, 'q.db')}`), postgres: await openStore(url, { schema }) };
});

afterAll(async () => {
  for (const store of Object.values(stores ?? {})) await store.close();
  await dropSchema(url, schema);
  dir?.remove();
});

describe.each(['sqlite', 'postgres'])('%s', (backend) => {
  it('an agent with no spend row in the period reads nothing settled and nothing reserved', async () => {
    const acme = stores[backend]!.tenant('acme');
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
