import { flooredSub, requireSumFits } from '../amounts.js';
import { countedKeys, isDayKey, monthOf } from '../period-books.js';
import type { Spend } from '../spend.js';
import type { TenantBooks } from './books.js';
import { corrupt } from './corrupt.js';
import { alertOnAccrual } from './spend-alerts.js';
import type { QuotaSettlement } from './types.js';

/*
 * What moves a period's figures (holds and settled totals), decided once for every adapter: each
 * write is checked first so that no figure passes 2^53 − 1 (docs/design/rules.md#p7); a write that
 * would is refused with INVALID_ARGUMENT naming the input and the bound, before it is written.
 */

function requireFits(field: string, what: string, total: Spend, adding: Spend): void {
  requireSumFits(`${field}.tokens`, `${what} (tokens)`, total.tokens, adding.tokens);
  requireSumFits(`${field}.minorUnits`, `${what} (minor units)`, total.minorUnits, adding.minorUnits);
}

/**
 * Stores the hold of `run` (of agent `agent`, or `null`) in `period`, held on `day` (`null` when
 * unknown; a day key is its own day), the run holding none. Refuses with INVALID_ARGUMENT
 * (`hold.tokens` / `hold.minorUnits`) when the holds counted in its month (which include its
 * day's) would sum past the bound.
 */
export function putHold(books: TenantBooks, run: string, agent: string | null, period: string, day: string | null, amount: Spend): void {
  const month = monthOf(period);
  requireFits('hold', `the holds of period ${month}`, books.heldInMonth(month), amount);
  books.putHold(run, agent, { period, day: isDayKey(period) ? period : day, amount });
}

/**
 * Moves the hold of `run` whole to `period`, held on `day` (docs/design/rules.md#c17): one period
 * loses exactly what the other gains. With `day` `undefined` (a bare carry), a day key is its own
 * day and a month keeps the hold's day when it lies in that month. Nothing when the run holds none.
 * Refuses with INVALID_ARGUMENT (`hold.tokens` / `hold.minorUnits`) when the holds of the new month
 * would sum past the bound.
 */
export function carryHold(books: TenantBooks, run: string, period: string, day?: string | null): void {
  const hold = books.hold(run);
  if (hold === null) return;
  const newDay = isDayKey(period) ? period : day !== undefined ? day : hold.day !== null && monthOf(hold.day) === period ? hold.day : null;
  if (hold.period === period && hold.day === newDay) return;
  const month = monthOf(period);
  if (monthOf(hold.period) !== month) requireFits('hold', `the holds of period ${month}`, books.heldInMonth(month), hold.amount);
  books.moveHold(run, period, newDay);
}

/**
 * Accrues a settle's `spend` to every key it counts in: the month of `period`, and its day
 * (`period` itself, or `day` for a month key), so a day's settled spend also counts in its month
 * whatever kind was in force; for a registered run of an agent, the same keys of the agent's books
 * too. `agent` is the run's agent when the caller has read it (`null`: none, or no registered run);
 * `undefined` reads it. With `atMs` (the decision's instant; `null`: none) the spend alerts the
 * accrual crosses are appended (docs/design/rules.md#e3). Throws INVALID_ARGUMENT (`spend.tokens`
 * / `spend.minorUnits`) when a total would pass the bound; the month is accrued first and is never
 * below its day, so it is the one that refuses, before anything is written.
 */
export function accrueSpent(
  books: TenantBooks,
  run: string,
  period: string,
  day: string | null,
  spend: Spend,
  agent: string | null | undefined,
  atMs: number | null,
): void {
  const keys = countedKeys(period, day);
  const totals: Spend[] = [];
  for (const key of keys) {
    const total = books.accrueSettled(key, spend);
    if (total !== null) {
      totals.push(total);
      continue;
    }
    const what = `the settled spend of period ${key}`;
    requireFits('spend', what, books.settledIn(key), spend);
    throw corrupt(books.tenant, `${what} refused an accrual that fits its bound`);
  }
  // An agent's total is part of the tenant's, so the check above bounds it too.
  const agentName = agent !== undefined ? agent : books.runAgent(run);
  const agentTotals = agentName === null ? null : keys.map((key) => books.accrueAgentSettled(agentName, key, spend));
  if (atMs !== null && (spend.tokens > 0 || spend.minorUnits > 0)) alertOnAccrual(books, { keys, totals, agent: agentName, agentTotals, spend, atMs });
}

/**
 * What a new receipt does to the books (docs/design/rules.md#c5, #c13, #c14): accrue its spend to
 * its period's month and day (`day` for a month key, when known; docs/design/rules.md#l80–#l82), to
 * the agent's books too for a run of an agent (`agent`; `undefined`: look the run up), refused with
 * INVALID_ARGUMENT, nothing written, when a total would pass 2^53 − 1, with the spend alerts it
 * crosses when the decision's instant `atMs` is given (`null`: the port's bare settle, which fires
 * none; docs/design/rules.md#e3); shrink the hold by the spend floored at 0 per unit (or drop it
 * when concluding); give the slot back when `releaseSlot`. The caller writes the receipt itself.
 */
export function applyReceipt(books: TenantBooks, s: QuotaSettlement, day: string | null, agent: string | null | undefined, atMs: number | null): void {
  if (s.period !== null) accrueSpent(books, s.run, s.period, day, s.spend, agent, atMs);
  if (s.concludes) books.dropHold(s.run);
  else {
    const hold = books.hold(s.run);
    if (hold !== null) {
      books.setHoldAmount(s.run, {
        tokens: flooredSub(hold.amount.tokens, s.spend.tokens),
        minorUnits: flooredSub(hold.amount.minorUnits, s.spend.minorUnits),
      });
    }
  }
  if (s.releaseSlot) books.giveSlot(s.run);
}
