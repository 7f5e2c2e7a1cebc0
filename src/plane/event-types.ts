import type { ThresholdSource } from '../core/alert-threshold-source.js';
import type { BooksUnit, ThresholdState } from '../core/alert-thresholds.js';
import type { QuotaEvent } from '../core/events.js';

/**
 * What `Plane.events` reads: the events after `after` (a `seq`; absent or 0: from the first), at
 * most `limit` (default 100, at most 1000), of `tenant` only when given. With `last` instead of
 * `after`: the newest `last` events (at most 1000), the tail of the log to follow from.
 */
export interface EventsInput {
  readonly after?: number | undefined;
  readonly last?: number | undefined;
  readonly limit?: number | undefined;
  readonly tenant?: string | undefined;
}

/**
 * A page of the event log, oldest first (docs/design/rules.md#e8). `next` is the cursor to ask
 * with next (the last event's `seq`, or `after` when the page is empty), so a reader that keeps
 * asking with it sees every event once, in commit order; `truncated` is true when more were there
 * (after the page; a `last` read has nothing newer, and says `false`).
 */
export interface EventsPage {
  readonly events: readonly QuotaEvent[];
  readonly next: number;
  readonly truncated: boolean;
}

/** One spend ceiling of a tenant (or of one of its agents) with its thresholds as they stand this period. */
export interface CeilingAlerts {
  readonly agent: string | null;
  readonly unit: BooksUnit;
  /** The ceiling, `null` when the unit has none (an absolute threshold still applies). */
  readonly ceiling: number | null;
  readonly settled: number;
  readonly source: ThresholdSource;
  readonly thresholds: readonly ThresholdState[];
}

/** A tenant's spend alerts for its current period: every ceiling with a threshold that applies. */
export interface AlertsStatus {
  readonly tenant: string;
  readonly period: string;
  readonly ceilings: readonly CeilingAlerts[];
}

