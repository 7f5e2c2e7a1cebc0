import { requireSumFits } from '../../core/amounts.js';
import type { Spend } from '../../core/spend.js';
import { decodeSpend } from '../rows.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { ACCRUE_SPENT, CARRY_HOLD, INSERT_HOLD, SELECT_HOLD, SELECT_SPENT, SUM_RESERVED } from './sqlite-queries.js';

/*
 * The writes that move a period's figures on SQLite (settled totals, holds), each checked first
 * in the caller's `BEGIN IMMEDIATE` transaction so that no figure passes 2^53 − 1: a write that
 * would is refused with INVALID_ARGUMENT naming the input and the bound, before anything is
 * written (DESIGN.md decision 2, issue 9 fault 4).
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

/** Throws INVALID_ARGUMENT (`spend.tokens` / `spend.minorUnits`) when `spend` would take `period`'s settled total past the bound. */
export function requireAccrualFits(conn: SqliteConnection, tenant: string, period: string, spend: Spend): void {
  requireFits('spend', `the settled spend of period ${period}`, spentOf(conn, tenant, period), spend);
}

/** Adds `spend` to `period`'s settled total; call {@link requireAccrualFits} first. */
export function accrueSpent(conn: SqliteConnection, tenant: string, period: string, spend: Spend): void {
  conn.run(ACCRUE_SPENT, { tenant, period, tokens: spend.tokens, minorUnits: spend.minorUnits });
}

/**
 * Inserts the hold of `run` in `period` (the run holds none), refusing with INVALID_ARGUMENT
 * (`hold.tokens` / `hold.minorUnits`) when the period's holds would sum past the bound.
 */
export function putHold(conn: SqliteConnection, tenant: string, run: string, period: string, amount: Spend): void {
  requireFits('hold', `the holds of period ${period}`, reservedOf(conn, tenant, period), amount);
  conn.run(INSERT_HOLD, { tenant, run, period, tokens: amount.tokens, minorUnits: amount.minorUnits });
}

/**
 * Moves the hold of `run` whole to `period` (contract §6.4); nothing when it holds none or holds
 * there already. Refuses with INVALID_ARGUMENT (`hold.tokens` / `hold.minorUnits`) when the holds
 * of `period` would sum past the bound.
 */
export function carryHold(conn: SqliteConnection, tenant: string, run: string, period: string): void {
  const hold = conn.get<{ period: string; tokens: number; minor_units: number }>(SELECT_HOLD, { tenant, run });
  if (hold === undefined || hold.period === period) return;
  const amount = decodeSpend(tenant, `the hold of run '${run}'`, hold.tokens, hold.minor_units);
  requireFits('hold', `the holds of period ${period}`, reservedOf(conn, tenant, period), amount);
  conn.run(CARRY_HOLD, { tenant, run, period });
}
