import { requireSumFits } from '../../core/amounts.js';
import { countedKeys, isDayKey, monthOf } from '../../core/period-books.js';
import type { Spend } from '../../core/spend.js';
import { corrupt, decodeSpend } from '../rows.js';
import type { SqliteConnection } from './sqlite-connection.js';
import {
  ACCRUE_AGENT_SPENT,
  ACCRUE_SPENT,
  CARRY_HOLD,
  INSERT_HOLD,
  SELECT_HOLD,
  SELECT_RUN_AGENT,
  SELECT_SPENT,
  SUM_RESERVED,
} from './sqlite-queries.js';

/*
 * The writes that move a period's figures on SQLite (settled totals, holds), each checked first
 * in the caller's `BEGIN IMMEDIATE` transaction so that no figure passes 2^53 − 1: a write that
 * would is refused with INVALID_ARGUMENT naming the input and the bound, before anything is
 * written.
 */

function spentOf(conn: SqliteConnection, tenant: string, period: string): Spend {
  const row = conn.get<{ tokens: number; minor_units: number }>(SELECT_SPENT, { tenant, period });
  return decodeSpend(tenant, 'settled spend', row?.tokens, row?.minor_units);
}

function reservedOf(conn: SqliteConnection, tenant: string, period: string): Spend {
  const row = conn.get<{ tokens: number; minor_units: number }>(SUM_RESERVED, { tenant, period });
  return decodeSpend(tenant, 'reserved spend', row?.tokens, row?.minor_units);
}

function requireFits(field: string, what: string, total: Spend, adding: Spend): void {
  requireSumFits(`${field}.tokens`, `${what} (tokens)`, total.tokens, adding.tokens);
  requireSumFits(`${field}.minorUnits`, `${what} (minor units)`, total.minorUnits, adding.minorUnits);
}

/**
 * Accrues a settle's `spend` to every key it counts in: the month of `period`, and its day
 * (`period` itself, or `day` for a month key), so a day's settled spend also counts in its month
 * whatever kind was in force; for a registered run of an agent, the same keys of the agent's books
 * too. `agent` is the run's agent when the caller has read it (`null`: none, or no registered run);
 * `undefined` reads it here. Throws INVALID_ARGUMENT (`spend.tokens` / `spend.minorUnits`) when a
 * total would pass the bound, having written nothing to that total; the caller's decision then
 * rolls back whatever else it wrote (a month's total is accrued first and is never below its day's,
 * so it is the one that refuses).
 */
export function accrueSpent(
  conn: SqliteConnection,
  tenant: string,
  run: string,
  period: string,
  day: string | null,
  spend: Spend,
  knownAgent?: string | null,
): void {
  const keys = countedKeys(period, day);
  // One guarded upsert per key: the read that checks the bound runs only when it refuses.
  for (const key of keys) {
    if (conn.run(ACCRUE_SPENT, { tenant, period: key, tokens: spend.tokens, minorUnits: spend.minorUnits }) === 1) continue;
    const what = `the settled spend of period ${key}`;
    requireFits('spend', what, spentOf(conn, tenant, key), spend);
    throw corrupt(tenant, `${what} refused an accrual that fits its bound`);
  }
  // The agent's books, for a registered run with an agent. An agent's total is part of
  // the tenant's, so the check above bounds it too.
  const agent = knownAgent !== undefined ? knownAgent : (conn.get<{ agent_name: string | null }>(SELECT_RUN_AGENT, { tenant, run })?.agent_name ?? null);
  if (agent === null) return;
  for (const key of keys) conn.run(ACCRUE_AGENT_SPENT, { tenant, agent, period: key, tokens: spend.tokens, minorUnits: spend.minorUnits });
}

/**
 * Inserts the hold of `run` (of agent `agent`, or `null`) in `period`, held on `day` (or `null`
 * when unknown), the run holding none. Refuses with INVALID_ARGUMENT (`hold.tokens` /
 * `hold.minorUnits`) when the holds counted in its month (which include its day's) would sum past
 * the bound.
 */
export function putHold(
  conn: SqliteConnection,
  tenant: string,
  run: string,
  period: string,
  day: string | null,
  amount: Spend,
  agent: string | null = null,
): void {
  const month = monthOf(period);
  requireFits('hold', `the holds of period ${month}`, reservedOf(conn, tenant, month), amount);
  conn.run(INSERT_HOLD, {
    tenant,
    run,
    period,
    day: isDayKey(period) ? period : day,
    tokens: amount.tokens,
    minorUnits: amount.minorUnits,
    agentName: agent,
  });
}

/**
 * Moves the hold of `run` whole to `period`, held on `day` (docs/design/rules.md#c17): one period
 * loses exactly what the other gains. With `day` `undefined` (a bare carry), a day key is its own
 * day and a month keeps the hold's day when it lies in that month. Nothing when the run holds none.
 * Refuses with INVALID_ARGUMENT (`hold.tokens` / `hold.minorUnits`) when the holds of the new month
 * would sum past the bound.
 */
export function carryHold(conn: SqliteConnection, tenant: string, run: string, period: string, day?: string | null): void {
  const hold = conn.get<{ period: string; day: string | null; tokens: number; minor_units: number }>(SELECT_HOLD, { tenant, run });
  if (hold === undefined) return;
  const newDay = isDayKey(period) ? period : day !== undefined ? day : hold.day !== null && monthOf(hold.day) === period ? hold.day : null;
  if (hold.period === period && hold.day === newDay) return;
  const amount = decodeSpend(tenant, `the hold of run '${run}'`, hold.tokens, hold.minor_units);
  const month = monthOf(period);
  if (monthOf(hold.period) !== month) {
    requireFits('hold', `the holds of period ${month}`, reservedOf(conn, tenant, month), amount);
  }
  conn.run(CARRY_HOLD, { tenant, run, period, day: newDay });
}
