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

interface ReceiptRow {
  readonly period: string | null;
  readonly tokens: number;
  readonly minor_units: number;
  readonly release_slot: number;
  readonly concludes: number;
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
 * The body of `settle` (contract §6.11), inside the caller's `BEGIN IMMEDIATE` transaction. An
 * identical receipt answers `'already-settled'` and changes nothing; a different payload under the
 * same `(run, epoch)` throws `CONFLICT` (the transaction rolls back, so nothing changes). Otherwise
 * the receipt is written and applied once: accrue to its period's month and day (`day` for a
 * month key, when known; DESIGN.md decision 15) (refused with INVALID_ARGUMENT,
 * nothing written, when the total would pass 2^53 − 1), shrink the hold by
 * the spend floored at 0 (or delete it when concluding), release the slot when `releaseSlot`.
 */
export function settleInTransaction(
  conn: SqliteConnection,
  tenant: string,
  s: QuotaSettlement,
  day: string | null = null,
): SettleOutcome {
  const key = { tenant, run: s.run, epoch: s.epoch };
  const receipt = conn.get<ReceiptRow>(SELECT_RECEIPT, key);
  if (receipt !== undefined) {
    if (samePayload(receipt, s)) return 'already-settled';
    throw new QuotaError('CONFLICT', `quota pass ${s.run}/${s.epoch} was settled twice with different payloads`, {
      details: { tenant, run: s.run, epoch: s.epoch },
    });
  }
  // A receipt a prune removed must not be written again as if new (issue 9 fault 6).
  refuseIfPruned(conn, tenant, s.run, 'settle');
  const spend = { tokens: s.spend.tokens, minorUnits: s.spend.minorUnits };
  if (s.period !== null) accrueSpent(conn, tenant, s.run, s.period, day, spend);
  conn.run(INSERT_RECEIPT, {
    ...key,
    period: s.period,
    ...spend,
    releaseSlot: s.releaseSlot ? 1 : 0,
    concludes: s.concludes ? 1 : 0,
  });
  if (s.concludes) conn.run(DELETE_HOLD, { tenant, run: s.run });
  else conn.run(SHRINK_HOLD, { tenant, run: s.run, ...spend });
  if (s.releaseSlot) conn.run(DELETE_SLOT, { tenant, run: s.run });
  return 'settled';
}
