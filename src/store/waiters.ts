import { parseBudget } from '../core/budget.js';
import { requireAdmitRequest } from './lifecycle-arguments.js';
import { corrupt } from './rows.js';
import { requireInstantMs } from '../core/instant.js';
import { requireBoolean, requireLeaseMs, requireObject } from './store-arguments.js';
import type { WaitTerms } from '../core/lifecycle/waiting-types.js';
import type { AdmitRequest } from './types.js';
import type { WaiterPlace, WaitingEntry } from '../core/lifecycle/waiter-books.js';

/*
 * Waiting admissions: the shapes every adapter shares, the
 * validation of their arguments, and the pure rules of the queue. A waiter is an admission that
 * was refused only `TooManyRuns` and asked to wait: it is kept in the store's waiter table, first
 * come first served per tenant, and granted by the transaction that frees a slot.
 */

export type { CancelOutcome, WaitingAdmission, WaitOutcome, WaitQueue, WaiterSweep, WaitTerms } from '../core/lifecycle/waiting-types.js';
export { timedOutRefusal } from '../core/lifecycle/waiting-types.js';

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

/** A waiter's row as both stores keep it (`quota_waiters`), the columns the queue decisions read. */
export interface QueueRow {
  readonly run_id: string;
  readonly seq: number;
  readonly state: 'waiting' | 'granted' | 'refused';
  readonly request_json: string;
  readonly enqueued_at_ms: number;
  readonly lease_expires_at_ms: number;
}

/** A waiting waiter of `tenant` from its row, its request rebuilt at the instant asked (`STORE_CORRUPT` when unreadable). */
export function waitingEntryOf(tenant: string, row: Pick<QueueRow, 'run_id' | 'seq' | 'request_json' | 'lease_expires_at_ms'>): WaitingEntry {
  return {
    run: row.run_id,
    seq: row.seq,
    leaseExpiresAtMs: row.lease_expires_at_ms,
    requestAt: (atMs: number) => waiterRequest(tenant, row.request_json, atMs),
  };
}

/** A waiter's place in its queue from its row. */
export function waiterPlaceOf(row: Pick<QueueRow, 'run_id' | 'seq' | 'state' | 'enqueued_at_ms' | 'lease_expires_at_ms'>): WaiterPlace {
  return { run: row.run_id, seq: row.seq, state: row.state, enqueuedAtMs: row.enqueued_at_ms, leaseExpiresAtMs: row.lease_expires_at_ms };
}
