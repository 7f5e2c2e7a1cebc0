import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { requireIdentifier } from '../core/identifiers.js';
import type { Held, RunStatus } from '../store/types.js';
import { RUN_STATUSES } from '../store/types.js';
import {
  DEFAULT_LIST_LIMIT,
  type AuditLogInput,
  type AuditLogPage,
  type ReservationsInput,
  type RunsInput,
  type RunsPage,
} from './operator-types.js';
import type { PlaneContext } from './plane-context.js';
import { parseLimit, requireRecord } from './plane-input.js';
import { storeCall, tenantHandle } from './store-call.js';

/*
 * The operator listings (issue #5). Each asks the store for one row more than the page, so
 * `truncated` is a fact rather than a guess from a full page (contract §9.2).
 */

function parseStatuses(value: unknown): RunStatus[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0) {
    throw invalidArgument('statuses', `must be a non-empty array of run statuses, got ${describe(value)}`);
  }
  return value.map((status: unknown, index) => {
    if (typeof status !== 'string' || !(RUN_STATUSES as readonly string[]).includes(status)) {
      throw invalidArgument(`statuses[${index}]`, `must be one of ${RUN_STATUSES.join(', ')}, got ${describe(status)}`);
    }
    return status as RunStatus;
  });
}

/** `Plane.runs`. */
export async function runs(context: PlaneContext, input: RunsInput): Promise<RunsPage> {
  const request = requireRecord('request', input);
  const tenant = requireIdentifier('tenant', request.tenant);
  const statuses = parseStatuses(request.statuses);
  const after = request.after === undefined ? undefined : requireIdentifier('after', request.after);
  const limit = parseLimit(request.limit, DEFAULT_LIST_LIMIT);
  const rows = await storeCall('runs', () => tenantHandle(context.store, tenant).runs({ statuses, after, limit: limit + 1 }));
  const page = rows.slice(0, limit);
  const truncated = rows.length > limit;
  return { runs: page, truncated, next: truncated ? (page[page.length - 1]?.run ?? null) : null };
}

/** `Plane.reservations`. */
export async function reservations(context: PlaneContext, input: ReservationsInput): Promise<{ holds: Held[]; truncated: boolean }> {
  const request = requireRecord('request', input);
  const tenant = requireIdentifier('tenant', request.tenant);
  const limit = parseLimit(request.limit, DEFAULT_LIST_LIMIT);
  const rows = await storeCall('reservations', () => tenantHandle(context.store, tenant).reservations(limit + 1));
  return { holds: rows.slice(0, limit), truncated: rows.length > limit };
}

/** `Plane.auditLog`. */
export async function auditLog(context: PlaneContext, input: AuditLogInput): Promise<AuditLogPage> {
  const request = requireRecord('request', input);
  const tenant = requireIdentifier('tenant', request.tenant);
  const limit = parseLimit(request.limit, DEFAULT_LIST_LIMIT);
  const action = request.action === undefined ? undefined : requireIdentifier('action', request.action);
  const rows = await storeCall('auditLog', () =>
    tenantHandle(context.store, tenant).auditLog(action === undefined ? { limit: limit + 1 } : { limit: limit + 1, action }),
  );
  return { rows: rows.slice(0, limit), truncated: rows.length > limit };
}

/** `Plane.tenants`. */
export async function tenants(context: PlaneContext): Promise<string[]> {
  return storeCall('tenants', () => context.store.tenants());
}
