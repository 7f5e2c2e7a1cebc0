import { isClosedStatus } from './run-rules.js';
import type { RunStatus } from './types.js';

/**
 * What a prune reads of one registered run to judge it (store.ts `prunableRuns` and `pruneRuns`):
 * - `status`: the run's status now;
 * - `closedAtMs`: when it entered that status (Unix ms; for a closed run, when it concluded or
 *   was released; a run that never changed status: its admission);
 * - `holdsSlot`: it holds a concurrency slot;
 * - `holdsHold`: it holds a spend hold;
 * - `hasUnsettledPass`: one of its passes has no receipt yet (a late settle of it is still booked).
 */
export interface PruneFacts {
  readonly status: RunStatus;
  readonly closedAtMs: number;
  readonly holdsSlot: boolean;
  readonly holdsHold: boolean;
  readonly hasUnsettledPass: boolean;
}

/**
 * Why a run may not be pruned, the first that applies in this order:
 * - `open`: its status is not closed (not `concluded` nor `released`);
 * - `closed-after-cut-off`: it closed after the cut-off;
 * - `holds-slot`: it still holds a slot;
 * - `holds-hold`: it still holds a hold;
 * - `pass-unsettled`: a pass of it can still be settled (docs/design/rules.md#r9).
 */
export type NotPrunableReason = 'open' | 'closed-after-cut-off' | 'holds-slot' | 'holds-hold' | 'pass-unsettled';

/** The verdict of {@link judgePrunable}: prunable, or not and why. */
export type Prunability = { readonly prunable: true } | { readonly prunable: false; readonly reason: NotPrunableReason };

const PRUNABLE: Prunability = Object.freeze({ prunable: true });

/**
 * Whether a run with `facts` may be pruned at the cut-off `closedAtOrBeforeMs` (Unix ms,
 * inclusive), and if not, why (docs/design/rules.md#r1, #r9): exactly a run that is closed
 * (concluded or released alike), closed at or before the cut-off, holds no slot and no hold, and
 * has every pass settled. A released run whose pass never settled stays (#r9): its late settle is
 * still booked, and a prune must never turn a settle that would be booked into a refusal. Pure;
 * both stores call it on the facts they read inside the transaction that removes what it chose.
 */
export function judgePrunable(facts: PruneFacts, closedAtOrBeforeMs: number): Prunability {
  if (!isClosedStatus(facts.status)) return { prunable: false, reason: 'open' };
  if (facts.closedAtMs > closedAtOrBeforeMs) return { prunable: false, reason: 'closed-after-cut-off' };
  if (facts.holdsSlot) return { prunable: false, reason: 'holds-slot' };
  if (facts.holdsHold) return { prunable: false, reason: 'holds-hold' };
  if (facts.hasUnsettledPass) return { prunable: false, reason: 'pass-unsettled' };
  return PRUNABLE;
}
