import { requireAppliedInstant } from './applied-instant.js';
import { describe, requireAmount } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { normaliseRunId, requireIdentifier } from '../core/identifiers.js';
import { parseOperator } from '../core/operator.js';
import { requireInstantMs } from '../core/instant.js';
import type { DeleteTenantRequest } from './port/tenant-deletion.js';
import { requireLimit, requireObject } from './store-arguments.js';
import { RUN_STATUSES, type AppliedInstant, type ReleaseRunRequest, type RunListRequest, type RunStatus } from './types.js';

/*
 * Validation of the sweep, listing and operator-act arguments of the port (store.ts) at
 * the handle boundary, shared by every adapter. Each returns a normalised copy or throws
 * `INVALID_ARGUMENT` naming the field.
 */

/** A run status, one of `RUN_STATUSES`. */
export function requireRunStatus(field: string, value: unknown): RunStatus {
  if (typeof value !== 'string' || !(RUN_STATUSES as readonly string[]).includes(value)) {
    throw invalidArgument(field, `must be one of ${RUN_STATUSES.map((status) => `'${status}'`).join(', ')}, got ${describe(value)}`);
  }
  return value as RunStatus;
}

/** A listing cursor: absent, or the last run id of the previous page. */
function optionalCursor(field: string, value: unknown): string | undefined {
  return value === undefined || value === null ? undefined : requireIdentifier(field, value);
}

/** A `runs` page request (types.ts `RunListRequest`). */
export function requireRunListRequest(value: unknown): RunListRequest {
  const record = requireObject('request', value);
  let statuses: RunStatus[] | undefined;
  if (record.statuses !== undefined && record.statuses !== null) {
    if (!Array.isArray(record.statuses) || record.statuses.length === 0) {
      throw invalidArgument('statuses', `must be a non-empty array of run statuses, got ${describe(record.statuses)}`);
    }
    statuses = record.statuses.map((status: unknown, index) => requireRunStatus(`statuses[${index}]`, status));
  }
  return { statuses, after: optionalCursor('after', record.after), limit: requireLimit('limit', record.limit) };
}

/** A `lapsedRuns` request. */
export function requireLapsedRunsRequest(value: unknown): { atMs: number; after?: string | undefined; limit: number } {
  const record = requireObject('request', value);
  return {
    atMs: requireInstantMs('atMs', record.atMs),
    after: optionalCursor('after', record.after),
    limit: requireLimit('limit', record.limit),
  };
}

/** A `sweepRun` request. */
export function requireSweepRunRequest(value: unknown): { run: string; atMs: number; applied?: AppliedInstant } {
  const record = requireObject('request', value);
  const applied = requireAppliedInstant(record.applied);
  return { run: normaliseRunId('run', record.run), atMs: requireInstantMs('atMs', record.atMs), ...(applied === undefined ? {} : { applied }) };
}

/** A `sweepWaiters` request: its instant, and `applied` when given. */
export function requireSweepWaitersRequest(value: unknown): { atMs: number; applied?: AppliedInstant } {
  const record = requireObject('request', value);
  const applied = requireAppliedInstant(record.applied);
  return { atMs: requireInstantMs('atMs', record.atMs), ...(applied === undefined ? {} : { applied }) };
}

/** A `cancelWaiter` request: the run, its instant, and `applied` when given. */
export function requireCancelWaiterRequest(value: unknown): { run: string; atMs: number; applied?: AppliedInstant } {
  const record = requireObject('request', value);
  return { run: normaliseRunId('run', record.run), ...requireSweepWaitersRequest(record) };
}

/** An `unsettledPasses` request. */
export function requireUnsettledPassesRequest(value: unknown): { atMs: number; limit: number } {
  const record = requireObject('request', value);
  return { atMs: requireInstantMs('atMs', record.atMs), limit: requireLimit('limit', record.limit) };
}

/** An `idleHolds` request. */
export function requireIdleHoldsRequest(value: unknown): { idleSinceMs: number; limit: number } {
  const record = requireObject('request', value);
  return { idleSinceMs: requireInstantMs('idleSinceMs', record.idleSinceMs), limit: requireLimit('limit', record.limit) };
}

/** A `releaseRun` request (types.ts `ReleaseRunRequest`). */
export function requireReleaseRunRequest(value: unknown): ReleaseRunRequest {
  const record = requireObject('request', value);
  return {
    run: normaliseRunId('run', record.run),
    atMs: requireInstantMs('atMs', record.atMs),
    by: parseOperator(record.by, 'by'),
    ...(record.ifStatus === undefined ? {} : { ifStatus: requireRunStatus('ifStatus', record.ifStatus) }),
  };
}

/** A `deleteTenant` request: an instant, the operator and a reason string. */
export function requireDeleteTenantRequest(value: unknown): DeleteTenantRequest {
  const record = requireObject('request', value);
  if (typeof record.reason !== 'string') throw invalidArgument('reason', `must be a string, got ${describe(record.reason)}`);
  return { atMs: requireInstantMs('atMs', record.atMs), by: parseOperator(record.by, 'by'), reason: record.reason };
}

/** An `auditChain` request: `afterSeq` a non-negative integer (0 reads from the first row). */
export function requireAuditChainRequest(value: unknown): { afterSeq: number; limit: number } {
  const record = requireObject('request', value);
  return { afterSeq: requireAmount('afterSeq', record.afterSeq), limit: requireLimit('limit', record.limit) };
}

/** An `overranPasses` request: its page size. */
export function requireOverranPassesRequest(value: unknown): { limit: number } {
  return { limit: requireLimit('limit', requireObject('request', value).limit) };
}

/** A `waitQueue` request: its instant. */
export function requireWaitQueueRequest(value: unknown): { atMs: number } {
  return { atMs: requireInstantMs('atMs', requireObject('request', value).atMs) };
}

/** A `countPrunableRate` request: its instant. */
export function requireCountPrunableRateRequest(value: unknown): { atOrBeforeMs: number } {
  return { atOrBeforeMs: requireInstantMs('atOrBeforeMs', requireObject('request', value).atOrBeforeMs) };
}

/** The `auditLog` options: a page size and, when given, the one action to list (an identifier). */
export function requireAuditLogOptions(value: unknown): { limit: number; action?: string } {
  const record = requireObject('options', value);
  const limit = requireLimit('limit', record.limit);
  return record.action === undefined ? { limit } : { limit, action: requireIdentifier('action', record.action) };
}
