import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { isReservedTenant, requireIdentifier, requireTenant } from '../core/identifiers.js';
import type { RunStatus } from '../store/types.js';
import { RUN_STATUSES } from '../store/types.js';
import { liftedHaltOf } from './lifted-halts.js';
import {
  DEFAULT_LIST_LIMIT,
  type AuditLogInput,
  type AuditLogPage,
  type LiftedHaltsInput,
  type LiftedHaltsPage,
  type ReservationsInput,
  type ReservationsPage,
  type RunsInput,
  type RunsPage,
  type SlotHoldersInput,
  type SlotHoldersPage,
} from './operator-types.js';
import type { PlaneContext } from './plane-context.js';
import { parseLimit } from './plane-input.js';
import { requireObject } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';

/*
 * The plane's read-only listings, the one set both the HTTP routes and the operator CLI read.
 * Each asks the store for one row more than the page, so `truncated` is a fact rather than a
 * guess from a full page.
 */

/** What every tenant listing starts from: the request, its validated tenant and its page size. */
function listingOf(input: unknown): { tenant: string; limit: number; request: Record<string, unknown> } {
  const request = requireObject('request', input);
  return { tenant: requireTenant('tenant', request.tenant), limit: parseLimit(request.limit, DEFAULT_LIST_LIMIT), request };
}

/** `rows` read with one row to spare, cut to the page. */
function page<T>(rows: readonly T[], limit: number): { items: T[]; truncated: boolean } {
  return { items: rows.slice(0, limit), truncated: rows.length > limit };
}

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
  const { tenant, limit, request } = listingOf(input);
  const statuses = parseStatuses(request.statuses);
  const after = request.after === undefined ? undefined : requireIdentifier('after', request.after);
  const rows = await storeCall('runs', () => tenantHandle(context.store, tenant).runs({ statuses, after, limit: limit + 1 }));
  const { items, truncated } = page(rows, limit);
  return { runs: items, truncated, next: truncated ? (items[items.length - 1]?.run ?? null) : null };
}

/** `Plane.slotHolders`. */
export async function slotHolders(context: PlaneContext, input: SlotHoldersInput): Promise<SlotHoldersPage> {
  const { tenant, limit } = listingOf(input);
  const rows = await storeCall('runningRuns', () => tenantHandle(context.store, tenant).runningRuns(limit + 1));
  const { items, truncated } = page(rows, limit);
  return { runs: items, truncated };
}

/** `Plane.reservations`. */
export async function reservations(context: PlaneContext, input: ReservationsInput): Promise<ReservationsPage> {
  const { tenant, limit } = listingOf(input);
  const rows = await storeCall('reservations', () => tenantHandle(context.store, tenant).reservations(limit + 1));
  const { items, truncated } = page(rows, limit);
  return { holds: items, truncated };
}

/** `Plane.liftedHalts`: the `lift` rows of the audit log, read back as the lifts they record. */
export async function liftedHalts(context: PlaneContext, input: LiftedHaltsInput): Promise<LiftedHaltsPage> {
  const { tenant, limit } = listingOf(input);
  const rows = await storeCall('auditLog', () => tenantHandle(context.store, tenant).auditLog({ limit: limit + 1, action: 'lift' }));
  const { items, truncated } = page(rows, limit);
  return { lifted: items.map(liftedHaltOf), truncated };
}

/** `Plane.auditLog`. */
export async function auditLog(context: PlaneContext, input: AuditLogInput): Promise<AuditLogPage> {
  const { tenant, limit, request } = listingOf(input);
  const action = request.action === undefined ? undefined : requireIdentifier('action', request.action);
  const rows = await storeCall('auditLog', () =>
    tenantHandle(context.store, tenant).auditLog(action === undefined ? { limit: limit + 1 } : { limit: limit + 1, action }),
  );
  const { items, truncated } = page(rows, limit);
  return { rows: items, truncated };
}

/**
 * `Plane.tenants`: the store's tenants, without the reserved names beginning `quotaplane:`
 * (`isReservedTenant`): `quotaplane:keys` and `quotaplane:plane` are quotaplane's own audit
 * chains, no customers (`verifyAudit` still walks them). Status, `/v1/tenants` and `/metrics` list these tenants.
 */
export async function tenants(context: PlaneContext): Promise<string[]> {
  return (await storeCall('tenants', () => context.store.tenants())).filter((tenant) => !isReservedTenant(tenant));
}
