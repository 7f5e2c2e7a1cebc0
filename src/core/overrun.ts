import { flooredSub } from './amounts.js';
import type { Spend } from './spend.js';

/**
 * By how much a pass ran over its hold (docs/design/decisions.md "Usage never reads as zero by
 * absence"; docs/design/rules.md#l90, #l91): per unit, the
 * settled `spend` less the `hold` the pass was granted, floored at 0. A pass that held nothing
 * (`null`: the quota bounded no spend) overran nothing. A unit held at 0 because the quota did not
 * bound it is not counted either, so only a unit with a positive hold can overrun.
 */
export function overrunOf(spend: Spend, hold: Spend | null): Spend {
  if (hold === null) return { tokens: 0, minorUnits: 0 };
  return {
    tokens: hold.tokens > 0 ? flooredSub(spend.tokens, hold.tokens) : 0,
    minorUnits: hold.minorUnits > 0 ? flooredSub(spend.minorUnits, hold.minorUnits) : 0,
  };
}

/** True when `overrun` is more than nothing in either unit. */
export function hasOverrun(overrun: Spend): boolean {
  return overrun.tokens > 0 || overrun.minorUnits > 0;
}
