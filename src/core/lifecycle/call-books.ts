import type { CallCeilings, CallUnit } from '../call-ceilings.js';
import type { CallAmounts, CallMeter } from '../call-meter.js';

/*
 * The model-call books of one tenant as a decision sees them (docs/design/rules.md#m1–#m12),
 * synchronously, inside the one transaction the adapter runs it in. core/lifecycle/model-calls.ts
 * is written once against this port; each store adapter implements it over its own tables. A
 * method holds no rule: reads return facts as stored, writes store what the decision computed.
 */

/** Where a model call stands: in flight (`open`), ended and booked (`booked`), or failed and given back (`released`). */
export type CallStatus = 'open' | 'booked' | 'released';

/**
 * One model call's reservation, as stored:
 * - `subjects`: every meter the call counts on (`tenant`, `agent:<name>`, `model:<id>`,
 *   `group:<name>`, `user:<id>`), fixed when it was reserved;
 * - `reserved`: its worst case, held on each of them while it is open;
 * - `deadlineMs`: when an open call's worst case is booked as an estimate;
 * - `booked`: what was booked when it ended (`null` while open or once released), and `estimated`
 *   when that is the worst case because no usage was reported.
 */
export interface CallReservation {
  readonly callId: string;
  readonly model: string;
  readonly agent: string | null;
  readonly endUser: string | null;
  readonly subjects: readonly string[];
  readonly reserved: CallAmounts;
  readonly maxOutputTokens: number;
  readonly atMs: number;
  readonly deadlineMs: number;
  readonly status: CallStatus;
  readonly booked: CallAmounts | null;
  readonly estimated: boolean;
  readonly closedAtMs: number | null;
}

/** The facts a model-call decision of one tenant reads and writes. */
export interface CallBooks {
  readonly tenant: string;
  /** The tenant's stored ceilings, or `null` when none were set. */
  callCeilings(): CallCeilings | null;
  /** The subjects that have a meter, in subject order, at most `limit`. */
  meterSubjects(limit: number): string[];
  /** A subject's meter, or `null` when nothing was ever reserved on it. */
  meter(subject: string): CallMeter | null;
  /** The meters of `subjects`, in their order (each as {@link meter} answers it): one read for a call's meters. */
  meters(subjects: readonly string[]): (CallMeter | null)[];
  /** The running total of the newest usage row recorded at or before `atMs`, or `null` when none is stored. */
  bookedAtOrBefore(subject: string, atMs: number): CallAmounts | null;
  /** The recorded instant of the oldest usage row after `afterMs` whose running total in `unit` is at least `amount`, or `null`. */
  firstReaching(subject: string, unit: CallUnit, amount: number, afterMs: number): number | null;
  reservation(callId: string): CallReservation | null;
  /** Open reservations whose deadline is at or before `atMs`, earliest deadline first, at most `limit`. */
  dueReservations(atMs: number, limit: number): CallReservation[];
  /** The earliest deadline of an open reservation counting on `subject`, or `null` when none is open there. */
  earliestDeadlineMs(subject: string): number | null;
  putMeter(subject: string, meter: CallMeter): void;
  /** Stores the usage row of `subject` at `atMs` (replacing one already there) with its running total. */
  putUsage(subject: string, atMs: number, booked: CallAmounts): void;
  /** Deletes the subject's usage rows recorded at or before `throughMs`. */
  pruneUsage(subject: string, throughMs: number): void;
  /** Deletes reservations that ended at or before `throughMs`. */
  pruneClosedReservations(throughMs: number): void;
  putReservation(reservation: CallReservation): void;
}
