import { afterAll, beforeAll, expect, it } from 'vitest';

import type { QuotaStore } from '../../src/store/store.js';
import { openFreshStore } from './pg-test-support.js';

// A batch's load and write go to the server as one simple query with their JSON as a literal
// (postgres-connection.ts `opening`, `closing`): a tenant whose name holds what String.replace
// reads as a pattern ($', $&, $`, $$) is decided, and stored, under its own name.

let fresh: { store: QuotaStore; close(): Promise<void> };

beforeAll(async () => {
  fresh = await openFreshStore('literal_names');
});

afterAll(async () => {
  await fresh?.close();
});

it("admits runs of tenants named with $', $&, $` and $$, each under its own name", async () => {
  const tenants = ["a$'b", 'a$&b', 'a$`b', 'a$$b'];
  for (const tenant of tenants) {
    const answer = await fresh.store.tenant(tenant).admit({ run: 'r1', budget: {}, width: 1, atMs: 1_760_000_000_000, leaseMs: 60_000 });
    expect(answer.ok, tenant).toBe(true);
  }
  expect((await fresh.store.tenants()).filter((tenant) => tenant.startsWith('a'))).toEqual([...tenants].sort());
});
