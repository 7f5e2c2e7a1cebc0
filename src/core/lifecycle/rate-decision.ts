import { countedSince, judgeRateBoundaries, rateBoundaryOrdinal, recordedRateInstantMs } from '../rate-ordinal.js';
import { isCountableWindow, ratePruneFloorMs, rateWindowStartMs, type RateCeiling } from '../rate.js';
import type { RateLimitedRefusal, UncountableRateRefusal } from '../refusal.js';
import type { RateBooks } from './rate-books.js';
import type { RateOutcome, RateReservation } from './types.js';

/**
 * Judges `ceilings` against the recorded dispatches of `grant` at `atMs` (docs/design/rules.md#c39,
 * #d7) with `judgeRateBoundaries`: one lookup by ordinal per ceiling, and on a refusal one more for
 * the true count, whatever the window holds. Reads only. An uncountable ceiling refuses before
 * anything is read.
 */
export function judgeRate(
  books: RateBooks,
  tenant: string,
  grant: string,
  ceilings: readonly RateCeiling[],
  atMs: number,
): RateLimitedRefusal | UncountableRateRefusal | null {
  if (!ceilings.every(isCountableWindow)) {
    return judgeRateBoundaries({ grant, ceilings, boundaries: [], atMs }) as UncountableRateRefusal;
  }
  const latestOrdinal = books.rateCounter(grant)?.lastOrdinal ?? 0;
  const boundaries = ceilings.map((ceiling) => {
    const ordinal = rateBoundaryOrdinal(latestOrdinal, ceiling);
    return ordinal === null ? null : books.rateInstantAt(grant, ordinal);
  });
  const verdict = judgeRateBoundaries({ grant, ceilings, boundaries, atMs });
  if (verdict === null || verdict.code === 'UncountableRate') return verdict;
  const first = books.firstRateOrdinalAfter(grant, rateWindowStartMs(atMs, verdict.ceiling.windowSeconds));
  return {
    code: 'RateLimited',
    tenant,
    grant,
    ceiling: verdict.ceiling,
    reached: countedSince(latestOrdinal, first),
    retryAtMs: verdict.retryAtMs,
  };
}

/**
 * A rate reservation (docs/design/rules.md#c31–#c37) inside the adapter's one transaction, which
 * serialises the reservations of each (tenant, grant): a recorded key succeeds unjudged and
 * unpruned; otherwise prune that grant's rows at or before the store-wide floor (its counter
 * stays), judge unless exempt, and record the dispatch under the next ordinal at
 * `recordedRateInstantMs` (never before the grant's latest). A refusal records nothing but returns
 * normally, so the prune still commits.
 */
export function reserveRate(books: RateBooks, tenant: string, r: RateReservation): RateOutcome {
  if (books.rateKeyRecorded(r.grant, r.run, r.dispatch)) return { ok: true };
  books.pruneRate(r.grant, ratePruneFloorMs(r.atMs));
  if (!r.exempt) {
    const refusal = judgeRate(books, tenant, r.grant, r.ceilings, r.atMs);
    if (refusal !== null) return { ok: false, refusal };
  }
  const latest = books.rateCounter(r.grant);
  const ordinal = (latest?.lastOrdinal ?? 0) + 1;
  books.recordRate(r.grant, r.run, r.dispatch, ordinal, recordedRateInstantMs(r.atMs, latest?.lastAtMs ?? null));
  return { ok: true };
}
