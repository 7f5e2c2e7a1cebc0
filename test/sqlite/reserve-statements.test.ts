import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parsePlaneCeiling } from '../../src/core/plane-ceiling.js';
import { parseQuota } from '../../src/core/quota.js';
import type { SpendHold } from '../../src/store/types.js';
import { SqliteConnection } from '../../src/store/sqlite/sqlite-connection.js';
import {
  COUNT_AGENT_SLOTS,
  COUNT_PLANE_AGENT_SLOTS,
  COUNT_PLANE_SLOTS,
  INSERT_SLOT,
  SELECT_AGENT_PERIOD_FIGURES,
  SELECT_PERIOD_FIGURES,
  SELECT_PLANE_CEILING,
  SELECT_SLOT_SNAPSHOT,
  UPSERT_PLANE_CEILING,
} from '../../src/store/sqlite/sqlite-queries.js';
import { reserveOnBooks } from '../../src/core/lifecycle/reserve.js';
import { SqliteTenantBooks } from '../../src/store/sqlite/sqlite-tenant-books.js';
import { migrateSqlite } from '../../src/store/sqlite/sqlite-migrations.js';

// What a reserve reads (cheaper decisions): only the counts and figures a ceiling covering the run
// needs. Each count skipped is a statement less in every admission; the answers do not change (the
// core decision ignores a figure no ceiling bounds), so only the statements show it.

const T0 = 1_767_600_000_000; // 2026-01-05T08:00:00Z
const BOT = 'refund-bot';

let db: Database.Database;
let conn: SqliteConnection;
let statements: string[];

beforeEach(() => {
  db = new Database(':memory:');
  migrateSqlite(db, 0);
  conn = new SqliteConnection(db, { busyTimeoutMs: 0 });
  statements = [];
  const get = conn.get.bind(conn);
  const run = conn.run.bind(conn);
  conn.get = ((sql, params) => {
    statements.push(sql);
    return get(sql, params);
  }) as typeof conn.get;
  conn.run = ((sql, params) => {
    statements.push(sql);
    return run(sql, params);
  }) as typeof conn.run;
});
afterEach(() => conn.close());

// Through the connection, as the store writes it: the write clears the connection's cache, so the
// next decision reads the plane ceiling again (and later ones answer it from the cache).
async function setPlane(plane: Record<string, unknown>): Promise<void> {
  await conn.write(() => conn.run(UPSERT_PLANE_CEILING, { ceilingJson: JSON.stringify(parsePlaneCeiling(plane)) }));
}

async function reserve(run: string, quota: Record<string, unknown>, options: { agent?: string; hold?: SpendHold } = {}): Promise<string[]> {
  statements = [];
  const outcome = await conn.write(() =>
    reserveOnBooks(new SqliteTenantBooks(conn, 'acme'), { run, agent: options.agent ?? null, quota: parseQuota(quota), hold: options.hold ?? null, atMs: T0 }),
  );
  expect(outcome).toEqual({ ok: true });
  return statements;
}

const HOLD: SpendHold = { period: '2026-01', amount: { tokens: 10, minorUnits: 0 } };

describe('a reserve reads only what a ceiling covering the run needs', () => {
  it('no concurrency ceiling anywhere and no hold: the plane ceiling is read and the slot inserted, nothing else', async () => {
    expect(await reserve('r1', { period: 'monthly' }, { agent: BOT })).toEqual([SELECT_PLANE_CEILING, INSERT_SLOT]);
  });

  it("a tenant ceiling alone: the tenant's snapshot, no agent or plane count", async () => {
    expect(await reserve('r1', { period: 'monthly', maxConcurrentRuns: 2 }, { agent: BOT })).toEqual([SELECT_PLANE_CEILING, SELECT_SLOT_SNAPSHOT, INSERT_SLOT]);
  });

  it("an agent ceiling counts that agent's slots for a run of that agent, and not for a run without an agent or of another agent", async () => {
    const quota = { period: 'monthly', agents: { [BOT]: { maxConcurrentRuns: 2 } } };
    expect(await reserve('r1', quota, { agent: BOT })).toEqual([SELECT_PLANE_CEILING, SELECT_SLOT_SNAPSHOT, COUNT_AGENT_SLOTS, INSERT_SLOT]);
    // The plane ceiling is read once, then answered from the connection's cache.
    expect(await reserve('r2', quota)).toEqual([INSERT_SLOT]);
    expect(await reserve('r3', { ...quota, maxConcurrentRuns: 5 }, { agent: 'triage' })).toEqual([SELECT_SLOT_SNAPSHOT, INSERT_SLOT]);
  });

  it('a plane-wide ceiling counts every slot once; a plane-wide agent ceiling counts only runs of that agent', async () => {
    await setPlane({ maxConcurrentRuns: 10 });
    expect(await reserve('r1', { period: 'monthly' }, { agent: BOT })).toEqual([SELECT_PLANE_CEILING, SELECT_SLOT_SNAPSHOT, COUNT_PLANE_SLOTS, INSERT_SLOT]);
    await setPlane({ agents: { [BOT]: { maxConcurrentRuns: 3 } } });
    expect(await reserve('r2', { period: 'monthly' }, { agent: BOT })).toEqual([SELECT_PLANE_CEILING, SELECT_SLOT_SNAPSHOT, COUNT_PLANE_AGENT_SLOTS, INSERT_SLOT]);
    expect(await reserve('r3', { period: 'monthly' }, { agent: 'triage' })).toEqual([SELECT_SLOT_SNAPSHOT, INSERT_SLOT]);
    expect(await reserve('r4', { period: 'monthly' })).toEqual([SELECT_SLOT_SNAPSHOT, INSERT_SLOT]);
  });

  it('a run that already holds its slot is counted by nobody: a retried reserve reads its snapshot only', async () => {
    await setPlane({ maxConcurrentRuns: 10, agents: { [BOT]: { maxConcurrentRuns: 3 } } });
    const quota = { period: 'monthly', maxConcurrentRuns: 2, agents: { [BOT]: { maxConcurrentRuns: 2 } } };
    await reserve('r1', quota, { agent: BOT });
    expect(await reserve('r1', quota, { agent: BOT })).toEqual([SELECT_SLOT_SNAPSHOT, INSERT_SLOT]);
  });

  it("a hold reads the tenant's period figures, and the agent's only when the agent's ceilings bound spend", async () => {
    const tenantOnly = await reserve('r1', { period: 'monthly', maxTokensPerPeriod: 1_000, agents: { [BOT]: { maxConcurrentRuns: 5 } } }, { agent: BOT, hold: HOLD });
    expect(tenantOnly).toContain(SELECT_PERIOD_FIGURES);
    expect(tenantOnly).not.toContain(SELECT_AGENT_PERIOD_FIGURES);
    const withAgent = await reserve('r2', { period: 'monthly', maxTokensPerPeriod: 1_000, agents: { [BOT]: { maxTokensPerPeriod: 100 } } }, { agent: BOT, hold: HOLD });
    expect(withAgent).toContain(SELECT_PERIOD_FIGURES);
    expect(withAgent).toContain(SELECT_AGENT_PERIOD_FIGURES);
    const agentless = await reserve('r3', { period: 'monthly', maxTokensPerPeriod: 1_000, agents: { [BOT]: { maxTokensPerPeriod: 100 } } }, { hold: HOLD });
    expect(agentless).not.toContain(SELECT_AGENT_PERIOD_FIGURES);
  });
});
