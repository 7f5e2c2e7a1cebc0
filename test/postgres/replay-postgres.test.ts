import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import type { ReplayReport } from '../../src/cli/replay/replay-types.js';
import { openStore } from '../../src/store/open-store.js';
import { AZURE_TRACE_DIR, HEADER, runCli, temporaryDirectory, writeTrace } from '../cli/cli-helpers.js';
import { dropSchema, freshSchemaName, testPgUrl } from './pg-test-support.js';

// `quotaplane replay … --store postgres://…`: the same replay and the same five
// invariants, measured from a PostgreSQL store. The schema is named in the URL (`?schema=`).

let url: string;
let schema: string;
let storeUrl: string;
let dir: { path: string; remove: () => void };

beforeAll(() => {
  url = testPgUrl();
  schema = freshSchemaName('replay');
  storeUrl = `${url}?schema=${schema}`;
});
afterAll(async () => {
  if (schema !== undefined) await dropSchema(url, schema);
});
beforeEach(() => {
  dir = temporaryDirectory();
});
afterEach(() => dir.remove());

async function replayJson(args: readonly string[]): Promise<{ status: number; report: ReplayReport }> {
  const { status, stdout, stderr } = await runCli(['replay', ...args, '--json']);
  expect(stderr).toBe('');
  return { status, report: JSON.parse(stdout) as ReplayReport };
}

const INVARIANTS = {
  settledWithinCeiling: true,
  runningWithinCeiling: true,
  slotsHeldWhileRunning: true,
  settledExactlyOnce: true,
  holdsReleased: true,
  slotsReleased: true,
};

describe('quotaplane replay on PostgreSQL', () => {
  it('replays a small trace exactly as on SQLite: refusals by code, settled spend, all invariants', async () => {
    // The SQLite replay test's trace: A runs, B finds A's slot taken, C follows A, D does not fit, E does.
    const trace = writeTrace(dir.path, 'small.csv', [
      HEADER,
      '2023-11-16 18:00:00.0000000,100,10',
      '2023-11-16 18:00:00.1000000,7,7',
      '2023-11-16 18:00:00.4500000,50,0',
      '2023-11-16 18:00:01.0000000,2000,100',
      '2023-11-16 18:00:01.0000000,0,5',
    ]);
    const flags = ['--tenants', '1', '--max-concurrent', '1', '--tokens-per-period', '5000', '--period', 'daily'];
    const { status, report } = await replayJson([trace, ...flags, '--store', storeUrl]);
    expect(status).toBe(0);
    expect(report.totals).toEqual({
      rows: 5,
      admitted: 3,
      refused: { TooManyRuns: 1, SpentOut: 1, Unbounded: 0, Halted: 0 },
      settled: { tokens: 165, minorUnits: 675 },
    });
    expect(report.invariants).toEqual(INVARIANTS);
    expect(report.store.temporary).toBe(false);
    // The rows went to the schema the URL named.
    const store = await openStore(storeUrl);
    try {
      expect(await store.tenants()).toEqual([`${report.options.tenantPrefix}tenant-1`]);
    } finally {
      await store.close();
    }
  });

  it('replays the first 2,000 requests of the Azure code trace over 20 tenants at 4 concurrent runs and 2,000,000 tokens a day exactly as SQLite does, every invariant true', async () => {
    // The whole trace is replayed on SQLite with its figures pinned (test/cli/azure-trace.test.ts);
    // here its first 2,000 rows, on both stores: the replay is deterministic, so every tenant's
    // admissions, refusals, settled spend and peak must agree.
    const rows = readFileSync(join(AZURE_TRACE_DIR, 'code.csv'), 'utf8').split(/\r?\n/).slice(0, 2_001);
    const trace = writeTrace(dir.path, 'code-2000.csv', rows);
    const flags = ['--tenants', '20', '--max-concurrent', '4', '--tokens-per-period', '2000000', '--period', 'daily'];
    const onPostgres = await replayJson([trace, ...flags, '--store', storeUrl]);
    const onSqlite = await replayJson([trace, ...flags]);
    expect(onPostgres.status).toBe(0);
    expect(onPostgres.report.totals.rows).toBe(2000);
    expect(onPostgres.report.totals.refused.TooManyRuns).toBeGreaterThan(0);
    expect(onPostgres.report.invariants).toEqual(INVARIANTS);
    expect(onPostgres.report.totals).toEqual(onSqlite.report.totals);
    // A store kept after the replay names its tenants under a prefix of their own.
    const prefix = onPostgres.report.options.tenantPrefix;
    expect(onPostgres.report.tenants.map((tenant) => ({ ...tenant, tenant: tenant.tenant.slice(prefix.length) }))).toEqual(onSqlite.report.tenants);
  }, 300_000);
});
