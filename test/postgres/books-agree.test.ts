import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PostgresQuotaStore } from '../../src/store/postgres/postgres-store.js';
import { booksDisagreements, describeDifferences, type BooksFigure } from './books-agree.js';
import { closeSchemaStore, openSchemaStore } from './pg-test-support.js';

// The books check of books-agree.ts must see every kind of drift it claims to see: the books of a
// small workload agree, then each derived figure is knocked off by one behind the store's back,
// inside a transaction that is rolled back, and the check must name that figure.

const T_MS = Date.UTC(2026, 11, 1, 12); // 2026-12-01T12:00Z
const AGENT = { name: 'bot', digest: 'ab'.repeat(32) };
const LIBRARY = { actor: 'books-test', basis: 'asserted' } as const;

let url: string;
let schema: string;
let store: PostgresQuotaStore;
let admin: pg.Client;

beforeAll(async () => {
  ({ url, schema, store, admin } = await openSchemaStore('books', { poolSize: 2 }));
  const acme = store.tenant('acme');
  await acme.setQuota(
    { period: 'daily', maxConcurrentRuns: 10, maxTokensPerPeriod: 1_000_000, maxMinorUnitsPerPeriod: 1_000_000, agents: { bot: { maxConcurrentRuns: 5 } } },
    { atMs: T_MS, by: LIBRARY, action: 'quota.set', subject: 'quota', detail: {} },
  );
  const budget = { maxTokens: 1_000, maxCallTokens: 1_000, maxMinorUnits: 50, maxCallMinorUnits: 50 };
  for (const run of ['r1', 'r2', 'r3']) {
    const admitted = await acme.admit({ run, agent: AGENT, budget, width: 1, atMs: T_MS, leaseMs: 60_000 });
    expect(admitted, JSON.stringify(admitted)).toMatchObject({ ok: true });
  }
  await acme.settlePass({ run: 'r1', epoch: 1, spend: { tokens: 100, minorUnits: 5 }, concludes: false, atMs: T_MS + 1 });
  await acme.settlePass({ run: 'r2', epoch: 1, spend: { tokens: 7, minorUnits: 1 }, concludes: true, atMs: T_MS + 2 });
  for (const dispatch of ['d1', 'd2', 'd3']) {
    await acme.dispatch({ run: 'r3', grant: 'tool://x/y', dispatch, ceilings: [{ count: 10, windowSeconds: 60 }], exempt: false, atMs: T_MS + 3 });
  }
});

afterAll(async () => {
  await closeSchemaStore({ url, schema, store, admin });
});

/** The figures the check names after `plant` runs, in a transaction rolled back afterwards. */
async function figuresAfter(plant: string): Promise<BooksFigure[]> {
  await admin.query('BEGIN');
  try {
    await admin.query(plant.replaceAll('{s}', `"${schema}"`));
    return [...new Set((await booksDisagreements(admin, schema, { inCallersTransaction: true })).map((d) => d.figure))].sort();
  } finally {
    await admin.query('ROLLBACK');
  }
}

describe('booksDisagreements', () => {
  it('finds nothing in the books of a workload the store wrote', async () => {
    const differences = await booksDisagreements(url, schema);
    expect(differences, describeDifferences(differences)).toEqual([]);
    // The workload wrote every figure the check reads.
    const counts = await admin.query<Record<string, string>>(`SELECT
      (SELECT count(*) FROM "${schema}".quota_figures WHERE running > 0)::text AS figures,
      (SELECT count(*) FROM "${schema}".quota_agent_figures WHERE running > 0)::text AS agent_figures,
      (SELECT count(*) FROM "${schema}".quota_spent WHERE held_tokens > 0 AND tokens > 0)::text AS spent,
      (SELECT count(*) FROM "${schema}".quota_agent_spent WHERE held_tokens > 0 AND tokens > 0)::text AS agent_spent,
      (SELECT count(*) FROM "${schema}".quota_rate)::text AS rate`);
    expect(counts.rows[0]).toEqual({ figures: '1', agent_figures: '1', spent: '2', agent_spent: '2', rate: '3' });
  });

  it.each<[string, string, BooksFigure[]]>([
    ['a tenant running count one too high', `UPDATE {s}.quota_figures SET running = running + 1`, ['figures']],
    ['a slot without its count', `INSERT INTO {s}.quota_running VALUES ('acme', 'ghost', 0, NULL)`, ['figures']],
    ['an agent running count one too high', `UPDATE {s}.quota_agent_figures SET running = running + 1`, ['agentFigures']],
    ['a slot of an agent without its count', `UPDATE {s}.quota_running SET agent_name = 'other' WHERE run_id = 'r3'`, ['agentFigures']],
    ['a month hold sum off by one token', `UPDATE {s}.quota_spent SET held_tokens = held_tokens + 1 WHERE period = '2026-12'`, ['held']],
    ['a day hold sum off by one minor unit', `UPDATE {s}.quota_spent SET held_minor_units = held_minor_units + 1 WHERE period = '2026-12-01'`, ['held']],
    ['a hold that shrank without its sums', `UPDATE {s}.quota_reserved SET tokens = tokens - 1 WHERE run_id = 'r3'`, ['agentHeld', 'held']],
    ['an agent hold sum off by one', `UPDATE {s}.quota_agent_spent SET held_tokens = held_tokens + 1 WHERE period = '2026-12-01'`, ['agentHeld']],
    ['a grant whose last ordinal fell behind', `UPDATE {s}.quota_rate_grants SET last_ordinal = last_ordinal - 1`, ['rateGrants']],
    ['a grant whose last instant is not its newest dispatch', `UPDATE {s}.quota_rate_grants SET last_at_ms = last_at_ms + 1`, ['rateGrants']],
    ['a dispatch without its grant row', `DELETE FROM {s}.quota_rate_grants`, ['rateGrants']],
    ['a dispatch recorded before the one numbered under it', `UPDATE {s}.quota_rate SET reserved_at_ms = reserved_at_ms - 5 WHERE ordinal = 2`, ['rateOrder']],
    ['a day settling more than its month', `UPDATE {s}.quota_spent SET tokens = tokens + 1 WHERE period = '2026-12-01'`, ['daysWithinMonth']],
    ['a month settled without a receipt', `UPDATE {s}.quota_spent SET tokens = tokens + 1 WHERE period = '2026-12'`, ['settledFromReceipts']],
    ['an agent day settling more than its month', `UPDATE {s}.quota_agent_spent SET minor_units = minor_units + 1 WHERE period = '2026-12-01'`, ['agentDaysWithinMonth', 'agentsWithinTenant']],
    ['an agent month settled without a receipt', `UPDATE {s}.quota_agent_spent SET tokens = tokens - 1 WHERE period = '2026-12'`, ['agentDaysWithinMonth', 'agentSettledFromReceipts']],
    ['agents settling more than their tenant', `UPDATE {s}.quota_spent SET tokens = tokens - 1`, ['agentsWithinTenant', 'settledFromReceipts']],
    [
      'a pass settled by both settles',
      `INSERT INTO {s}.quota_settled SELECT tenant, run_id, epoch, period, receipt_tokens, receipt_minor_units, true, false
         FROM {s}.quota_passes WHERE run_id = 'r1'`,
      ['agentSettledFromReceipts', 'oneReceiptPerPass', 'settledFromReceipts'],
    ],
    ['a run whose last epoch is not its latest pass', `UPDATE {s}.quota_runs SET last_epoch = 2 WHERE run_id = 'r1'`, ['lastEpoch']],
  ])('names %s', async (_label, plant, figures) => {
    expect(await figuresAfter(plant)).toEqual(figures);
  });
});
