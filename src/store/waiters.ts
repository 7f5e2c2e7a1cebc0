import { parseBudget } from '../core/budget.js';
import { requireAdmitRequest } from './lifecycle-arguments.js';
import { corrupt } from './rows.js';
import { requireInstantMs } from '../core/instant.js';
import { requireBoolean, requireLeaseMs, requireObject } from './store-arguments.js';
import type { WaitTerms } from '../core/lifecycle/waiting-types.js';
import type { AdmitRequest } from './types.js';

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
