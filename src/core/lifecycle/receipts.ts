import { QuotaError } from '../errors.js';
import type { StoredReceipt } from './books.js';
import type { QuotaSettlement } from './types.js';

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
