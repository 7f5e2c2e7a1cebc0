import { MAX_CALL_AMOUNT } from './call-ceilings.js';

// A model call's worst-case cost from the rate it is priced at (docs/design/rules.md#m5): the plane
// chooses the call's output cap, so the plane prices the tokens that cap leaves room for.

/**
 * What `tokens` cost at `minorUnitsPerMillionTokens`, in whole minor units **rounded up**: ceil(tokens
 * × rate / 1 000 000), exact in integers (BigInt) for any safe integers, capped at
 * {@link MAX_CALL_AMOUNT} (the most one call may reserve or book in any unit).
 */
export function worstCaseMinorUnits(tokens: number, minorUnitsPerMillionTokens: number): number {
  const cost = (BigInt(tokens) * BigInt(minorUnitsPerMillionTokens) + 999_999n) / 1_000_000n;
  return cost > BigInt(MAX_CALL_AMOUNT) ? MAX_CALL_AMOUNT : Number(cost);
}
