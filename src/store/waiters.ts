import { parseBudget } from '../core/budget.js';
import type { TooManyRunsRefusal } from '../core/refusal.js';
import { requireAdmitRequest } from './lifecycle-arguments.js';
import { corrupt } from './rows.js';
import { requireInstantMs } from '../core/instant.js';
import { requireBoolean, requireLeaseMs, requireObject } from './store-arguments.js';
import type { AdmitOutcome, AdmitRequest } from './types.js';

/*
 * Waiting admissions: the shapes every adapter shares, the
 * validation of their arguments, and the pure rules of the queue. A waiter is an admission that
 * was refused only `TooManyRuns` and asked to wait: it is kept in the store's waiter table, first
 * come first served per tenant, and granted by the transaction that frees a slot.
 */

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

/** The admission fields a waiter row keeps (the request without its instant), as JSON. */
export function waiterRequestJson(request: AdmitRequest): string {
  return JSON.stringify({
    run: request.run,
    agent: request.agent ?? null,
    chain: request.chain ?? null,
    budget: request.budget,
    width: request.width,
    leaseMs: request.leaseMs,
    quota: request.quota ?? null,
  });
}

/** The admission a waiter row stands for, at `atMs`; an unreadable row throws `STORE_CORRUPT`. */
export function waiterRequest(tenant: string, json: string, atMs: number): AdmitRequest {
  try {
    const record = JSON.parse(json) as Record<string, unknown>;
    return requireAdmitRequest({
      run: record.run,
      agent: record.agent ?? undefined,
      chain: record.chain ?? undefined,
      budget: parseBudget(record.budget, 'budget'),
      width: record.width,
      atMs,
      leaseMs: record.leaseMs,
      quota: record.quota ?? undefined,
    });
  } catch (error) {
    throw corrupt(tenant, `an unreadable waiter row (${error instanceof Error ? error.message : String(error)})`);
  }
}

/** Validates the wait terms of a waiting admission (`INVALID_ARGUMENT` naming the field). */
export function requireWaitTerms(value: unknown): WaitTerms {
  const record = requireObject('wait', value);
  const terms = { untilMs: requireInstantMs('wait.untilMs', record.untilMs), leaseMs: requireLeaseMs('wait.leaseMs', record.leaseMs) };
  if (record.keepPlace === undefined) return terms;
  return { ...terms, keepPlace: requireBoolean('wait.keepPlace', record.keepPlace) };
}

/**
 * The `TooManyRuns` refusal a waiter whose time ran out receives: the refusal the store decides
 * now, with where the waiter stood in the queue and how long it waited (ms).
 */
export function timedOutRefusal(refusal: TooManyRunsRefusal, position: number, waitedMs: number): TooManyRunsRefusal {
  return { ...refusal, queuePosition: position, waitedMs: Math.max(0, waitedMs) };
}
