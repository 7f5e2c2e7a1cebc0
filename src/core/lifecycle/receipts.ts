import { QuotaError } from '../errors.js';
import type { StoredReceipt, TenantBooks } from './books.js';
import { applyReceipt } from './hold-moves.js';
import { refuseIfPruned } from './refuse-pruned.js';
import type { QuotaSettlement, SettleOutcome } from './types.js';

function samePayload(stored: StoredReceipt, s: QuotaSettlement): boolean {
  return (
    stored.period === s.period &&
    stored.spend.tokens === s.spend.tokens &&
    stored.spend.minorUnits === s.spend.minorUnits &&
    stored.releaseSlot === s.releaseSlot &&
    stored.concludes === s.concludes
  );
}

/**
 * The answer to settling (run, epoch) again when `stored` is its receipt (docs/design/rules.md#c6,
 * #c7): the same payload answers `'already-settled'` and changes nothing; a different one throws
 * `CONFLICT`.
 */
export function answerStoredReceipt(tenant: string, stored: StoredReceipt, s: QuotaSettlement): 'already-settled' {
  if (samePayload(stored, s)) return 'already-settled';
  throw new QuotaError('CONFLICT', `quota pass ${s.run}/${s.epoch} was settled already with a different payload; the first receipt stands and nothing changed (a retry must repeat that settle exactly)`, {
    details: { tenant, run: s.run, epoch: s.epoch },
  });
}

/**
 * The port's `settle` (docs/design/rules.md#c5–#c7, #c13–#c15) inside the adapter's one
 * transaction. A (run, epoch) that already has a receipt (written by this settle, or by the pass's
 * own `settlePass`) is answered by {@link answerStoredReceipt}: `'already-settled'`, or `CONFLICT`
 * for a different payload (nothing changes). A run id a prune removed is refused with `CONFLICT`.
 * Otherwise the receipt is applied once (`applyReceipt`, with `day` the UTC day a month's spend also
 * counts in, when known) and stored.
 */
export function decideSettle(books: TenantBooks, s: QuotaSettlement, day: string | null): SettleOutcome {
  const stored = books.receipt(s.run, s.epoch);
  if (stored !== undefined) return answerStoredReceipt(books.tenant, stored, s);
  refuseIfPruned(books, s.run, 'settle');
  applyReceipt(books, s, day, undefined, null);
  books.insertReceipt(s.run, s.epoch, { period: s.period, spend: s.spend, releaseSlot: s.releaseSlot, concludes: s.concludes });
  return 'settled';
}
