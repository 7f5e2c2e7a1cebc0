import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_INSTANT_MS } from '../../src/core/instant.js';
import { closeSchemaStore, openSchemaStore, type SchemaStore } from './pg-test-support.js';

// A decision's applied clock (store.ts `applied`) that answers an instant beyond MAX_INSTANT_MS is
// no instant: like a clock that throws or answers NaN, the decision is taken at the instant it was
// asked (postgres-batcher.ts), and the other decisions batched with it are not failed with it
// (docs/design/rules.md#l93).

const ASKED_MS = MAX_INSTANT_MS - 60_000;
const BUDGET = { maxTokens: 500, maxCallTokens: 500 };

let opened: SchemaStore;

beforeAll(async () => {
  opened = await openSchemaStore('applied_clock');
});

afterAll(async () => {
  await closeSchemaStore(opened);
});

describe('an applied clock beyond the last instant', () => {
  it('L93 decides at the asked instant and fails none of the decisions batched with it', async () => {
    const acme = opened.store.tenant('acme');
    const beyond = { nowMs: () => MAX_INSTANT_MS + 1_000, maxWaitMs: 3_600_000 };
    const answers = await Promise.allSettled([
      acme.admit({ run: 'r-beyond', budget: BUDGET, width: 1, atMs: ASKED_MS, leaseMs: 1_000, applied: beyond }),
      ...['r1', 'r2', 'r3', 'r4'].map((run) => acme.admit({ run, budget: BUDGET, width: 1, atMs: ASKED_MS, leaseMs: 1_000 })),
    ]);
    expect(answers.map((a) => (a.status === 'fulfilled' ? a.value : { rejected: String(a.reason) }))).toEqual(
      ['r-beyond', 'r1', 'r2', 'r3', 'r4'].map((run) => ({ ok: true, run, epoch: 1, period: '9999-12', hold: null, leaseExpiresAtMs: ASKED_MS + 1_000 })),
    );
  });
});
