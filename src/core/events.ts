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
 * - `key`: what the event is about, as canonical JSON text (see {@link eventKey}); the store derives
 *   the event's `id` from it and keeps the first event of an id, ignoring any later one, which
 *   makes an event exactly once (docs/design/rules.md#e1).
 * - `tenant`: the tenant it is about, or `null` for the plane as a whole (a plane-wide halt).
 * - `atMs`: the decision's applied instant, Unix ms.
 * - `data`: the event's JSON body (amounts as integers in their units, instants in Unix ms).
 */
export interface NewEvent {
  readonly key: string;
  readonly type: EventType;
  readonly tenant: string | null;
  readonly atMs: number;
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * An event as the store keeps it: a {@link NewEvent} with `seq`, its position in the plane's event
 * log, and `id`, `evt_` and 32 hex digits of the SHA-256 of its key (the same on every instance and
 * every retry; a webhook sends it as `webhook-id`). Positions increase in commit order, so a reader
 * that has seen every event up to `seq` and asks for those after it misses none
 * (docs/design/rules.md#e8).
 */
export interface QuotaEvent extends NewEvent {
  readonly seq: number;
  readonly id: string;
}

/**
 * The key of an event about `parts`, its type first: canonical JSON text of the array, so no two
 * different subjects share a key whatever characters their identifiers hold.
 */
export function eventKey(type: EventType, ...parts: readonly (string | number | null)[]): string {
  return JSON.stringify([type, ...parts]);
}
