import type { StoredReceipt } from '../../core/lifecycle/books.js';
import { applyReceipt } from '../../core/lifecycle/hold-moves.js';
import { refuseIfPruned } from '../../core/lifecycle/passes.js';
import { answerStoredReceipt } from '../../core/lifecycle/receipts.js';
import { decodeSpend } from '../rows.js';
import type { QuotaSettlement, SettleOutcome } from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { INSERT_RECEIPT, SELECT_RECEIPT } from './sqlite-queries.js';
import { SqliteTenantBooks } from './sqlite-tenant-books.js';

/** The receipt columns `SELECT_RECEIPT` and `SELECT_PASS_TO_SETTLE` read (all NULL without a receipt). */
export interface ReceiptColumns {
  readonly stored_period: string | null;
  readonly stored_tokens: number | null;
  readonly stored_minor_units: number | null;
  readonly stored_release_slot: number | null;
  readonly stored_concludes: number | null;
}

/** The receipt (run, epoch) already has, from its receipt columns, or `undefined` when it has none. */
export function decodeStoredReceipt(tenant: string, row: ReceiptColumns): StoredReceipt | undefined {
  if (row.stored_tokens === null) return undefined;
  return {
    period: row.stored_period,
    spend: decodeSpend(tenant, 'a receipt', row.stored_tokens, row.stored_minor_units),
    releaseSlot: row.stored_release_slot === 1,
    concludes: row.stored_concludes === 1,
  };
}

/**
 * The body of the port's `settle` (docs/design/rules.md#c5–#c7, #c13–#c15), inside the caller's
 * `BEGIN IMMEDIATE` transaction. A (run, epoch) that already has a receipt (written by this settle,
 * or by the pass's own `settlePass`) is answered by `answerStoredReceipt`: `'already-settled'`, or
 * `CONFLICT` for a different payload (the transaction rolls back, so nothing changes). A run id a
 * prune removed is refused with `CONFLICT`. Otherwise the receipt is applied once
 * (`applyReceipt`) and written to `quota_settled`.
 */
export function settleInTransaction(conn: SqliteConnection, tenant: string, s: QuotaSettlement, day: string | null = null): SettleOutcome {
  const key = { tenant, run: s.run, epoch: s.epoch };
  const columns = conn.get<ReceiptColumns>(SELECT_RECEIPT, key);
  const receipt = columns === undefined ? undefined : decodeStoredReceipt(tenant, columns);
  if (receipt !== undefined) return answerStoredReceipt(tenant, receipt, s);
  const books = new SqliteTenantBooks(conn, tenant);
  refuseIfPruned(books, s.run, 'settle');
  applyReceipt(books, s, day);
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
