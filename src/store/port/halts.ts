import type { Halt, HaltScope } from '../../core/halt-scope.js';
import type { HaltLift } from '../../core/run-events.js';
import type { TenantScoped } from './tenant-scoped.js';

/**
 * The tenant's halts: durable rows, one per scope, thrown, read and lifted (the conditional lift
 * removes only the halt a caller read). Covered by docs/design/rules.md#c20–#c30 and #l36 (another
 * tenant's halts); what a halt stops is decided by the lifecycle (#l1–#l4, #l46–#l48). Used by the
 * plane's halt and lift (plane/halts.ts) and the attention listing of withheld runs.
 */
export interface HaltStore extends TenantScoped {
  /**
   * Upserts the halt row of `halt.scope`; a re-throw replaces reason, operator and instant
   * (docs/design/rules.md#c22). Writes its `halt.set` event in the same transaction (#e6).
   */
  setHalt(halt: Halt): Promise<void>;
  /**
   * Deletes the halt row; answers whether one stood (docs/design/rules.md#c24–#c26). The removal
   * writes its `halt.lifted` event, naming `lift` (who and when) when given (#e6).
   */
  liftHalt(scope: HaltScope, lift?: HaltLift): Promise<boolean>;
  /**
   * Deletes the row only if it still equals `standing` in reason, operator and instant
   * (docs/design/rules.md#c28–#c30); a removal writes its `halt.lifted` event, a miss none (#e6).
   */
  liftHaltIf(standing: Halt, lift?: HaltLift): Promise<boolean>;
  /** Every standing halt, bytewise by scope key, in one read; an unreadable row throws `STORE_CORRUPT` (docs/design/rules.md#c23). */
  halts(): Promise<Halt[]>;
}
