import { saturatingAdd } from './amounts.js';
import { periodEndMs } from './period.js';
import type { SpentOutRefusal } from './refusal.js';

/**
 * When a `SpentOut` refusal can clear (docs/design/rules.md#d13):
 * - `never`: the request alone exceeds the period's whole ceiling (`requested > limit`); an empty
 *   period could not hold it, so only a smaller budget or a higher ceiling helps;
 * - `period-end`: settled spend alone leaves no room (`settled + requested > limit`); nothing ever
 *   subtracts from settled spend, so only the next period clears it, at `atMs` (Unix ms);
 * - `holds`: the room is taken by held spend, which comes back whenever running runs settle for
 *   less than they hold: nobody can foresee when.
 */
export type SpentOutClearing =
  | { readonly when: 'never' }
  | { readonly when: 'period-end'; readonly atMs: number }
  | { readonly when: 'holds' };

/** Which {@link SpentOutClearing} a refusal is, from its own figures. Pure. */
export function spentOutClearing(refusal: SpentOutRefusal): SpentOutClearing {
  if (refusal.requested > refusal.limit) return { when: 'never' };
  if (saturatingAdd(refusal.settled, refusal.requested) > refusal.limit) return { when: 'period-end', atMs: periodEndMs(refusal.period) };
  return { when: 'holds' };
}
