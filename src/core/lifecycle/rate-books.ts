/*
 * The rate facts of one tenant as a rate decision sees them (docs/design/rules.md#c31–#c39): per
 * (tenant, grant) a counter of dispatches (the latest ordinal and recorded instant, never pruned)
 * and one row per dispatch numbered by ordinal, whose recorded instants grow with the ordinal.
 * Synchronous, inside the deciding transaction; each method stores or returns facts, no rule.
 */

/** A grant's counter: its latest ordinal and recorded instant (Unix ms). */
export interface RateGrantCounter {
  readonly lastOrdinal: number;
  readonly lastAtMs: number;
}

/** What a rate decision reads and writes of the tenant's books. */
export interface RateBooks {
  /** Whether dispatch (run, dispatch) of `grant` was recorded already. */
  rateKeyRecorded(grant: string, run: string, dispatch: string): boolean;
  /** Deletes the dispatches of `grant` recorded at or before `floorMs`; the counter stays. */
  pruneRate(grant: string, floorMs: number): void;
  /** The grant's counter, or `null` before its first dispatch. */
  rateCounter(grant: string): RateGrantCounter | null;
  /** The recorded instant of the dispatch of `grant` numbered `ordinal`, or `null` when pruned or absent. */
  rateInstantAt(grant: string, ordinal: number): number | null;
  /** The ordinal of the oldest dispatch of `grant` recorded strictly after `sinceMs`, or `null`. */
  firstRateOrdinalAfter(grant: string, sinceMs: number): number | null;
  /** Records dispatch (run, dispatch) of `grant` under `ordinal` at `recordedMs`, and moves the counter there. */
  recordRate(grant: string, run: string, dispatch: string, ordinal: number, recordedMs: number): void;
}
