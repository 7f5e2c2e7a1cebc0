/*
 * Events: facts about the books a platform wants to hear of (a spend threshold crossed, a ceiling
 * reached, a run that overran its hold or was stranded, a halt thrown or lifted). Each event is
 * written in the transaction of the decision that caused it, under an id derived from what it is
 * about, so two instances deciding the same crossing, a retry or a restart can never write a second
 * one (docs/design/rules.md#e1). Pure values: no clock, no I/O.
 */

/** What an event says happened. */
export const EVENT_TYPES = ['threshold.crossed', 'ceiling.reached', 'run.overran', 'run.stranded', 'halt.set', 'halt.lifted'] as const;

/** One of {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * An event as a decision produces it, before the store numbers it.
 * - `id`: derived from what the event is about (see the builders below); the store keeps the first
 *   event of an id and ignores any later one, which makes an event exactly once.
 * - `tenant`: the tenant it is about, or `null` for the plane as a whole (a plane-wide halt).
 * - `atMs`: the decision's applied instant, Unix ms.
 * - `data`: the event's JSON body (amounts as integers in their units, instants in Unix ms).
 */
export interface NewEvent {
  readonly id: string;
  readonly type: EventType;
  readonly tenant: string | null;
  readonly atMs: number;
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * An event as the store keeps it: a {@link NewEvent} with `seq`, its position in the plane's event
 * log. Positions increase in commit order, so a reader that has seen every event up to `seq` and
 * asks for those after it misses none.
 */
export interface QuotaEvent extends NewEvent {
  readonly seq: number;
}
