import type { TooManyRunsRefusal } from '../refusal.js';
import type { AdmitOutcome } from './types.js';

/** How long a caller waits, and the lease that keeps its place while it does (Unix ms / ms). */
export interface WaitTerms {
  /** The instant the caller stops waiting (Unix ms): at or after it a collect is final. */
  readonly untilMs: number;
  /** How long the waiter's place lives without being renewed, ms; every collect renews it. */
  readonly leaseMs: number;
  /**
   * On a final collect only: another caller of the same run still waits on (a retry after a lost
   * answer shares the place), so when room still refuses, this caller hears its `TooManyRuns`
   * refusal and the place stays, waiting, for the other. Default false: a final collect ends the place.
   */
  readonly keepPlace?: boolean;
}

/**
 * A waiting answer: the admission joined (or still stands in) its tenant's queue. `position` is 1
 * for the first waiter of the tenant still waiting; `enqueuedAtMs` is when it joined (Unix ms).
 */
export interface WaitingAdmission {
  readonly ok: false;
  readonly waiting: true;
  readonly run: string;
  readonly position: number;
  readonly enqueuedAtMs: number;
}

/** Answer of a waiting admission or a collect: a pass, a refusal that wrote nothing, or still waiting. */
export type WaitOutcome = AdmitOutcome | WaitingAdmission;

/** What `cancelWaiter` found: a waiting place removed, a granted slot given back, or nothing of this run. */
export type CancelOutcome = 'cancelled' | 'grant-withdrawn' | 'absent';

/**
 * What `sweepWaiters` did: `expired` waiters whose lease lapsed were removed (their callers are
 * gone); `recovered` grants nobody collected were withdrawn (slot and hold given back, the run
 * erased); `granted` waiters were admitted into the room this made.
 */
export interface WaiterSweep {
  readonly expired: number;
  readonly recovered: number;
  readonly granted: number;
}

/**
 * A tenant's queue as it stands at an instant: `depth` is the number of live waiters still waiting,
 * `oldestEnqueuedAtMs` when the first of them joined (or `null`), and `uncollected` the grants
 * written that their callers have not collected yet.
 */
export interface WaitQueue {
  readonly depth: number;
  readonly oldestEnqueuedAtMs: number | null;
  readonly uncollected: number;
}

/**
 * The `TooManyRuns` refusal a waiter whose time ran out receives: the refusal the store decides
 * now, with where the waiter stood in the queue and how long it waited (ms).
 */
export function timedOutRefusal(refusal: TooManyRunsRefusal, position: number, waitedMs: number): TooManyRunsRefusal {
  return { ...refusal, queuePosition: position, waitedMs: Math.max(0, waitedMs) };
}
