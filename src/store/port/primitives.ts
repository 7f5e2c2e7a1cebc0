import type { RateCeiling } from '../../core/rate.js';
import type { Spend } from '../../core/spend.js';
import type { TenantQuota } from '../../core/quota.js';
import type { Held, QuotaSettlement, RateOutcome, RateReservation, ReserveOutcome, SettleOutcome, SpendHold } from '../types.js';
import type { TenantScoped } from './tenant-scoped.js';

/**
 * The store primitives: slots, holds, receipts and the period figures, and the rate windows, each
 * one transaction. The conformance battery pins them down in the C cases and the port rules:
 * docs/design/rules.md#c1–#c19 (slots, receipts, holds), #c31–#c43 (rate windows, races), #p1–#p9.
 * The plane reads the figures for usage, spend history, the health check and the operator listings
 * of slot holders and holds; `rateRoom` answers the rate windows' room. The raw `reserve`, `settle`
 * and `release` are the contract a third-party store is proved against; the plane decides through
 * `RunLifecycleStore` instead.
 */
export interface StorePrimitives extends TenantScoped {
  /**
   * Decide and insert in one serialised transaction (docs/design/rules.md#c1, #c12): the run's slot
   * and, when `hold` is given and the run holds none, its hold. Refuses `TooManyRuns` (full count)
   * or `SpentOut` and writes nothing, not even the slot. Idempotent per run; the first
   * `admittedAtMs` wins. The stored plane-wide ceiling applies as well (`bound: 'plane'`); a raw
   * reserve has no agent, so no per-agent ceiling covers it.
   */
  reserve(request: { run: string; quota: TenantQuota; hold?: SpendHold | null; atMs: number }): Promise<ReserveOutcome>;
  /** Deletes the run's slot and hold in one transaction; idempotent (docs/design/rules.md#p4). */
  release(run: string): Promise<void>;
  /** Moves the run's hold, whole, to `period`; no check, no-op without a hold (docs/design/rules.md#c17). */
  carry(run: string, period: string): Promise<void>;
  /** Hold rows in ascending run-id order, at most `limit` (docs/design/rules.md#c18). */
  reservations(limit: number): Promise<Held[]>;
  /** Sum of the holds in `period`, saturating. */
  reserved(period: string): Promise<Spend>;
  /**
   * Writes the receipt of `(run, epoch)` and applies it once: accrue to `period`, shrink or (when
   * concluding) delete the hold, release the slot when `releaseSlot`. An identical retry changes
   * nothing; a different payload throws `CONFLICT` and changes nothing (docs/design/rules.md#c6,
   * #c7). A receipt of a run `pruneRuns` removed is never written again: `CONFLICT`
   * (`details.pruned`), nothing changed.
   */
  settle(settlement: QuotaSettlement): Promise<SettleOutcome>;
  /** Settled total of `period`, zero when never written (docs/design/rules.md#c8). */
  spent(period: string): Promise<Spend>;
  /** Number of slots. */
  running(): Promise<number>;
  /** Slot holders in ascending run-id order, at most `limit` (docs/design/rules.md#p5). */
  runningRuns(limit: number): Promise<string[]>;
  /**
   * Records one dispatch against the grant's sliding windows, serialised per (tenant, grant)
   * (docs/design/rules.md#c31–#c37): a present key succeeds unjudged; otherwise prune below the
   * store-wide floor, judge (unless exempt) and insert. A refusal inserts nothing (the prune still
   * commits).
   */
  reserveRate(reservation: RateReservation): Promise<RateOutcome>;
  /** Read-only: what `reserveRate` would answer a fresh non-exempt key (docs/design/rules.md#c33). */
  rateRoom(grant: string, ceilings: readonly RateCeiling[], atMs: number): Promise<RateOutcome>;
}
