import type { Clock } from '../core/clock.js';
import type { AppliedInstant } from '../store/types.js';
import type { QuotaStore } from '../store/store.js';
import { requireLeaseMs } from '../store/store-arguments.js';
import { requireInstantMs } from '../core/instant.js';

/** What every plane verb shares: the store, the clock, the default lease and the run-id source. */
export interface PlaneContext {
  readonly store: QuotaStore;
  readonly clock: Clock;
  readonly leaseMs: number;
  /**
   * The plane's clock and bound handed to the store, so a decision asked without an instant is
   * recorded at the instant it is applied (docs/design/rules.md#l93;
   * `PlaneOptions.maxDecisionWaitMs`).
   */
  readonly applied: AppliedInstant;
  /** A new `run_<ULID>` whose time part is `atMs`, monotonic within this plane. */
  readonly newRunId: (atMs: number) => string;
}

/** `atMs` as given (validated), or the plane clock's now when absent. */
export function instantOf(context: PlaneContext, atMs: unknown, field = 'atMs'): number {
  if (atMs !== undefined) return requireInstantMs(field, atMs);
  return requireInstantMs('clock.nowMs()', context.clock.nowMs());
}

/**
 * The `applied` member of a store request: the plane's clock and bound when the caller gave no
 * `atMs` (the decision is then recorded when it is applied), nothing when it named its instant.
 */
export function appliedFor(context: PlaneContext, atMs: unknown): { applied?: AppliedInstant } {
  return atMs === undefined ? { applied: context.applied } : {};
}

/** `leaseMs` as given (validated), or the plane's default lease. */
export function leaseOf(context: PlaneContext, leaseMs: unknown): number {
  return leaseMs === undefined ? context.leaseMs : requireLeaseMs('leaseMs', leaseMs);
}
