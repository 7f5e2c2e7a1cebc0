import { QuotaError } from '../../core/errors.js';
import type { QuotaSettlement, SettleOutcome } from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { accrueSpent } from './sqlite-books.js';
import { refuseIfPruned } from './sqlite-retention.js';
import {
  DELETE_HOLD,
  DELETE_SLOT,
  INSERT_RECEIPT,
  SELECT_RECEIPT,
  SHRINK_HOLD,
} from './sqlite-queries.js';

/** A stored receipt as `SELECT_RECEIPT` reads it (and as a pass row's `receipt_*` columns give it). */
export interface ReceiptRow {
  readonly period: string | null;
  readonly tokens: number;
  readonly minor_units: number;
  readonly release_slot: number;
  readonly concludes: number;
}

/** The receipt columns `SELECT_RECEIPT` and `SELECT_PASS_TO_SETTLE` read (all NULL without a receipt). */
export interface ReceiptColumns {
  readonly stored_period: string | null;
  readonly stored_tokens: number | null;
  readonly stored_minor_units: number | null;
  readonly stored_release_slot: number | null;
  readonly stored_concludes: number | null;
}

/** The receipt (run, epoch) already has, from its receipt columns, or `undefined` when it has none. */
export function storedReceipt(row: ReceiptColumns): ReceiptRow | undefined {
  if (row.stored_tokens === null) return undefined;
  return {
    period: row.stored_period,
    tokens: row.stored_tokens,
    minor_units: row.stored_minor_units as number,
    release_slot: row.stored_release_slot as number,
    concludes: row.stored_concludes as number,
  };
}

function samePayload(row: ReceiptRow, s: QuotaSettlement): boolean {
  return (
    row.period === s.period &&
    row.tokens === s.spend.tokens &&
    row.minor_units === s.spend.minorUnits &&
    row.release_slot === (s.releaseSlot ? 1 : 0) &&
    row.concludes === (s.concludes ? 1 : 0)
  );
}

/**
 * The answer to settling (run, epoch) again when `stored` is its receipt (docs/design/rules.md#c6,
 * #c7): the same payload answers `'already-settled'` and changes nothing; a different one throws
 * `CONFLICT`.
 */
export function answerStoredReceipt(tenant: string, stored: ReceiptRow, s: QuotaSettlement): 'already-settled' {
  if (samePayload(stored, s)) return 'already-settled';
  throw new QuotaError('CONFLICT', `quota pass ${s.run}/${s.epoch} was settled already with a different payload; the first receipt stands and nothing changed (a retry must repeat that settle exactly)`, {
    details: { tenant, run: s.run, epoch: s.epoch },
  });
}

/**
 * What a new receipt does to the books (docs/design/rules.md#c5, #c13, #c14), inside the caller's
 * transaction: accrue its spend to its period's month and day (`day` for a month key, when known;
 * docs/design/rules.md#l80–#l82), to the agent's books too for a run of an agent (`agent`;
 * `undefined`: look the run up), and refused with INVALID_ARGUMENT, nothing written, when a total
 * would pass 2^53 − 1; shrink the hold by the spend floored at 0 (or delete it when concluding);
 * release the slot when `releaseSlot`. The caller writes the receipt itself.
 */
export function applyReceipt(
  conn: SqliteConnection,
  tenant: string,
  s: QuotaSettlement,
  day: string | null,
  agent?: string | null,
): void {
  const spend = { tokens: s.spend.tokens, minorUnits: s.spend.minorUnits };
  if (s.period !== null) accrueSpent(conn, tenant, s.run, s.period, day, spend, agent);
  if (s.concludes) conn.run(DELETE_HOLD, { tenant, run: s.run });
  else conn.run(SHRINK_HOLD, { tenant, run: s.run, ...spend });
  if (s.releaseSlot) conn.run(DELETE_SLOT, { tenant, run: s.run });
}

/**
 * The body of the port's `settle` (docs/design/rules.md#c5–#c7, #c13–#c15), inside the caller's
 * `BEGIN IMMEDIATE` transaction. A (run, epoch) that already has a receipt (written by this settle,
 * or by the pass's own `settlePass`) is answered by {@link answerStoredReceipt}:
 * `'already-settled'`, or `CONFLICT` for a different payload (the transaction rolls back, so
 * nothing changes). A run id a prune removed is refused with `CONFLICT`. Otherwise the receipt is
 * applied once ({@link applyReceipt}) and written to `quota_settled`.
 */
export function settleInTransaction(
  conn: SqliteConnection,
  tenant: string,
  s: QuotaSettlement,
  day: string | null = null,
): SettleOutcome {
  const key = { tenant, run: s.run, epoch: s.epoch };
  const columns = conn.get<ReceiptColumns>(SELECT_RECEIPT, key);
  const receipt = columns === undefined ? undefined : storedReceipt(columns);
  if (receipt !== undefined) return answerStoredReceipt(tenant, receipt, s);
  refuseIfPruned(conn, tenant, s.run, 'settle');
  applyReceipt(conn, tenant, s, day);
  conn.run(INSERT_RECEIPT, {
    ...key,
    period: s.period,
    tokens: s.spend.tokens,
    minorUnits: s.spend.minorUnits,
    releaseSlot: s.releaseSlot ? 1 : 0,
    concludes: s.concludes ? 1 : 0,
  });
  return 'settled';
}
