import { monotonicFactory } from 'ulid';

import { MAX_AMOUNT, requireAmount } from '../core/amounts.js';
import { MAX_CALL_AMOUNT, MAX_CALL_LEASE_MS, MIN_CALL_LEASE_MS, parseCallCeilings, type CallCeilings } from '../core/call-ceilings.js';
import { invalidArgument, QuotaError } from '../core/errors.js';
import { requireCustomerTenant, requireIdentifier, requireTenant } from '../core/identifiers.js';
import { parseOperator, type Operator } from '../core/operator.js';
import type { AuditAction } from '../core/audit-actions.js';
import type { CallReservation } from '../core/lifecycle/call-books.js';
import type { SubjectStanding } from '../core/lifecycle/call-standings.js';
import type { CallEnded, CallUsage, ReserveCallOutcome } from '../core/lifecycle/model-calls.js';
import type { CallMeterStore } from '../store/port/model-calls.js';
import { requireObject } from '../store/store-arguments.js';
import { parseNewTenant, requireExistingTenant } from './known-tenant.js';
import { DEFAULT_LIST_LIMIT } from './operator-types.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { parseLimit, requireRequest } from './plane-input.js';
import { LIBRARY_OPERATOR } from './quota.js';
import { storeCall, tenantHandle } from './store-call.js';
import { pooledRandom } from './pooled-random.js';

/**
 * A model call to reserve (`Plane.reserveCall`, docs/design/rules.md#m3–#m6):
 * - `tenant`; `model` (required), `agent` and `endUser` (optional): who the call is for;
 * - `callId`: the caller's id, so a retry answers the same reservation; made (`call_<ULID>`) when absent;
 * - `inputTokens`: the prompt's tokens, counted or estimated (0 … 10^12, `MAX_CALL_AMOUNT`, as every amount of a call);
 * - `maxOutputTokens`: the output cap the call will ask the model for (≥ 1); absent, the tenant's
 *   `defaultMaxOutputTokens` (4096 unless set) is reserved, and answered so the call can ask for it;
 * - `maxMinorUnits`: its worst-case cost (0 … 10^12); or
 * - `minorUnitsPerMillionTokens`: the dearest rate of its model, minor units per million tokens (a
 *   safe integer ≥ 0): the plane prices the worst-case tokens at it, after choosing the output cap
 *   (docs/design/rules.md#m5). One of the two is required when a minor-unit ceiling covers the
 *   call (#m11); both is `INVALID_ARGUMENT`;
 * - `leaseMs`: how long it may stay in flight (1000 … 86 400 000) before its worst case is booked
 *   as an estimate; else the tenant's `leaseMs`, else 15 minutes;
 * - `atMs`: the instant to decide at, else the plane's clock.
 */
export interface ReserveCallInput {
  readonly tenant: string;
  readonly model: string;
  readonly agent?: string;
  readonly endUser?: string;
  readonly callId?: string;
  readonly inputTokens: number;
  readonly maxOutputTokens?: number;
  readonly maxMinorUnits?: number;
  readonly minorUnitsPerMillionTokens?: number;
  readonly leaseMs?: number;
  readonly atMs?: number;
}

/** The end of a call (`Plane.adjustCall`): `usage` as reported, or none (its worst case is booked as an estimate). */
export interface AdjustCallInput {
  readonly tenant: string;
  readonly callId: string;
  readonly usage?: CallUsage;
  readonly atMs?: number;
}

/**
 * A failed call to give back (`Plane.releaseCall`). `by`: the operator freeing a stuck call; when
 * given, the release is audited as `call.release` (a caller giving back its own failed call names
 * nobody, and nothing is audited).
 */
export interface ReleaseCallInput {
  readonly tenant: string;
  readonly callId: string;
  readonly atMs?: number;
  readonly by?: Operator;
}

const RESERVE_MEMBERS = new Set(['tenant', 'model', 'agent', 'endUser', 'callId', 'inputTokens', 'maxOutputTokens', 'maxMinorUnits', 'minorUnitsPerMillionTokens', 'leaseMs', 'atMs']);
const ADJUST_MEMBERS = new Set(['tenant', 'callId', 'usage', 'atMs']);
const USAGE_MEMBERS = new Set(['inputTokens', 'outputTokens', 'minorUnits']);
const RELEASE_MEMBERS = new Set(['tenant', 'callId', 'atMs', 'by']);
const LIST_MEMBERS = new Set(['tenant', 'atMs', 'limit']);
const CHANGE_OPTIONS = new Set(['by', 'newTenant']);

// One monotonic generator: call ids made in the same millisecond still sort in the order made.
const nextUlid = monotonicFactory(pooledRandom());

function meters(context: PlaneContext): CallMeterStore {
  const store = context.store;
  if (store.callMeters === undefined) {
    throw new QuotaError('STORE_MISCONFIGURED', `the ${store.backend} store keeps no model-call books; use the SQLite or PostgreSQL store of this version`, {
      details: { reason: 'capability', capability: 'callMeters' },
    });
  }
  return store.callMeters();
}

/** `Plane.reserveCall`: validates, then reserves the call's worst case in one store decision. */
export async function reserveCall(context: PlaneContext, input: ReserveCallInput): Promise<ReserveCallOutcome> {
  const request = requireRequest(input, RESERVE_MEMBERS);
  const tenant = requireTenant('tenant', request.tenant);
  const atMs = instantOf(context, request.atMs);
  const maxOutputTokens = request.maxOutputTokens === undefined ? undefined : requireBetween('maxOutputTokens', request.maxOutputTokens, 1, MAX_CALL_AMOUNT);
  const leaseMs = request.leaseMs === undefined ? undefined : requireBetween('leaseMs', request.leaseMs, MIN_CALL_LEASE_MS, MAX_CALL_LEASE_MS);
  const call = {
    callId: request.callId === undefined ? `call_${nextUlid(Math.max(atMs, 1))}` : requireIdentifier('callId', request.callId),
    model: requireIdentifier('model', request.model),
    agent: request.agent === undefined ? undefined : requireIdentifier('agent', request.agent),
    endUser: request.endUser === undefined ? undefined : requireIdentifier('endUser', request.endUser),
    inputTokens: requireBetween('inputTokens', request.inputTokens, 0, MAX_CALL_AMOUNT),
    maxOutputTokens,
    maxMinorUnits: request.maxMinorUnits === undefined ? undefined : requireBetween('maxMinorUnits', request.maxMinorUnits, 0, MAX_CALL_AMOUNT),
    minorUnitsPerMillionTokens:
      request.minorUnitsPerMillionTokens === undefined ? undefined : requireBetween('minorUnitsPerMillionTokens', request.minorUnitsPerMillionTokens, 0, MAX_AMOUNT),
    leaseMs,
    atMs,
  };
  return storeCall('reserveCall', () => meters(context).reserveCall(tenant, call));
}

/** `Plane.adjustCall`: validates, then books what the call reported (or its worst case, as an estimate). */
export async function adjustCall(context: PlaneContext, input: AdjustCallInput): Promise<CallEnded> {
  const request = requireRequest(input, ADJUST_MEMBERS);
  const tenant = requireTenant('tenant', request.tenant);
  const callId = requireIdentifier('callId', request.callId);
  const atMs = instantOf(context, request.atMs);
  const usage = request.usage === undefined ? undefined : parseUsage(request.usage);
  return storeCall('adjustCall', () => meters(context).adjustCall(tenant, { callId, usage, atMs }));
}

/**
 * `Plane.releaseCall`: validates, then gives a failed call's reservation back; an operator's
 * release (`by`) is then audited as `call.release` with what was given back.
 */
export async function releaseCall(context: PlaneContext, input: ReleaseCallInput): Promise<CallEnded> {
  const request = requireRequest(input, RELEASE_MEMBERS);
  const tenant = requireTenant('tenant', request.tenant);
  const callId = requireIdentifier('callId', request.callId);
  const atMs = instantOf(context, request.atMs);
  const by = request.by === undefined ? undefined : parseOperator(request.by, 'by');
  const ended = await storeCall('releaseCall', () => meters(context).releaseCall(tenant, { callId, atMs }));
  if (by !== undefined && !ended.retried) {
    const handle = tenantHandle(context.store, tenant);
    await storeCall('appendAudit', () =>
      handle.appendAudit({ atMs, by, action: 'call.release' satisfies AuditAction, subject: `call:${callId}`, detail: { reserved: ended.call.reserved, model: ended.call.model } }),
    );
  }
  return ended;
}

/** `Plane.modelCall`: one call as stored, or `null` (ended calls are kept about a day). */
export async function modelCall(context: PlaneContext, input: { readonly tenant: string; readonly callId: string }): Promise<CallReservation | null> {
  const request = requireObject('request', input);
  const tenant = requireTenant('tenant', request.tenant);
  const callId = requireIdentifier('callId', request.callId);
  return storeCall('call', () => meters(context).call(tenant, callId));
}

/** `Plane.openCalls`: a tenant's calls in flight, earliest deadline first (`limit` 1 … 1000, default 100). */
export async function openCalls(context: PlaneContext, input: { readonly tenant: string; readonly limit?: number }): Promise<CallReservation[]> {
  const request = requireRequest(input, LIST_MEMBERS);
  const tenant = requireTenant('tenant', request.tenant);
  const limit = parseLimit(request.limit, DEFAULT_LIST_LIMIT);
  await bookLapsedCalls(context, tenant, instantOf(context, undefined));
  return storeCall('openCalls', () => meters(context).openCalls(tenant, limit));
}

/**
 * `Plane.callStandings` (docs/design/rules.md#m10): every subject of the tenant with a meter or
 * configured ceilings, what its windows and periods count at `atMs` and the room left, at most
 * `limit` subjects (1 … 1000, default 100), the tenant first.
 */
export async function callStandings(context: PlaneContext, input: { readonly tenant: string; readonly atMs?: number; readonly limit?: number }): Promise<SubjectStanding[]> {
  const request = requireRequest(input, LIST_MEMBERS);
  const tenant = requireTenant('tenant', request.tenant);
  const atMs = instantOf(context, request.atMs);
  const limit = parseLimit(request.limit, DEFAULT_LIST_LIMIT);
  await bookLapsedCalls(context, tenant, atMs);
  return storeCall('callStandings', () => meters(context).callStandings(tenant, atMs, limit));
}

/** `Plane.callCeilings`: the tenant's model-call ceilings, or `null` when none are set. */
export async function getCallCeilings(context: PlaneContext, tenant: unknown): Promise<CallCeilings | null> {
  const id = requireTenant('tenant', tenant);
  return storeCall('callCeilings', () => meters(context).callCeilings(id));
}

/**
 * `Plane.setCallCeilings` (docs/design/rules.md#m9): validates the ceilings (`null` removes them),
 * refuses a tenant that does not exist unless `newTenant`, replaces them, then appends the
 * `calls.set` audit row with the old and new ceilings. The meters and what their windows count
 * stay as they are. Answers the ceilings as stored.
 */
export async function setCallCeilings(context: PlaneContext, tenant: unknown, ceilings: unknown, options: unknown): Promise<CallCeilings | null> {
  const id = requireCustomerTenant('tenant', tenant);
  const next = ceilings === null ? null : parseCallCeilings(ceilings, 'ceilings');
  const change = options === undefined ? {} : requireRequest(options, CHANGE_OPTIONS);
  const by = change.by === undefined ? LIBRARY_OPERATOR : parseOperator(change.by, 'by');
  const atMs = instantOf(context, undefined);
  await requireExistingTenant(context.store, id, 'quota', parseNewTenant(change.newTenant));
  const store = meters(context);
  const previous = await storeCall('callCeilings', () => store.callCeilings(id));
  await storeCall('setCallCeilings', () => store.setCallCeilings(id, next, atMs));
  const handle = tenantHandle(context.store, id);
  await storeCall('appendAudit', () =>
    handle.appendAudit({ atMs, by, action: 'calls.set' satisfies AuditAction, subject: 'call-ceilings', detail: { old: previous, new: next } }),
  );
  return next;
}

/** Most lapsed calls a listing books first (docs/design/rules.md#m7); the rest go with later decisions. */
const LAPSED_CALLS_PER_LISTING = 100;

// A listing first books the tenant's calls past their deadline (M7), so a tenant with no new
// reservation does not show a lost call as still in flight; a store that cannot write then fails
// the listing closed rather than show it.
async function bookLapsedCalls(context: PlaneContext, tenant: string, atMs: number): Promise<void> {
  await storeCall('expireCalls', () => meters(context).expireCalls(tenant, atMs, LAPSED_CALLS_PER_LISTING));
}

function parseUsage(value: unknown): CallUsage {
  const usage = requireRequest(value, USAGE_MEMBERS);
  return {
    inputTokens: requireBetween('usage.inputTokens', usage.inputTokens, 0, MAX_CALL_AMOUNT),
    outputTokens: requireBetween('usage.outputTokens', usage.outputTokens, 0, MAX_CALL_AMOUNT),
    minorUnits: usage.minorUnits === undefined ? undefined : requireBetween('usage.minorUnits', usage.minorUnits, 0, MAX_CALL_AMOUNT),
  };
}

function requireBetween(field: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw invalidArgument(field, `must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}
