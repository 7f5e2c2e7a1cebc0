import { parseCallCeilings, type CallCeilings } from '../core/call-ceilings.js';
import type { CallAmounts, CallMeter } from '../core/call-meter.js';
import type { CallReservation, CallStatus } from '../core/lifecycle/call-books.js';
import { corrupt, decodeAmount } from './rows.js';

// The model-call rows both adapters store (migrations 0006), read back the same way.

/** The columns of `quota_call_meters` after `tenant, subject`, in the order both adapters select them. */
export const METER_COLUMNS =
  'booked_tokens, booked_requests, booked_minor_units, held_tokens, held_requests, held_minor_units, latest_at_ms, base_tokens, base_requests, base_minor_units, pruned_through_ms';

/** A `quota_call_meters` row. */
export interface MeterRow {
  readonly booked_tokens: unknown;
  readonly booked_requests: unknown;
  readonly booked_minor_units: unknown;
  readonly held_tokens: unknown;
  readonly held_requests: unknown;
  readonly held_minor_units: unknown;
  readonly latest_at_ms: unknown;
  readonly base_tokens: unknown;
  readonly base_requests: unknown;
  readonly base_minor_units: unknown;
  readonly pruned_through_ms: unknown;
}

/** The named parameters of a meter row, for both adapters' upserts. */
export function meterParams(tenant: string, subject: string, meter: CallMeter): Record<string, string | number | null> {
  return {
    tenant,
    subject,
    bookedTokens: meter.booked.tokens,
    bookedRequests: meter.booked.requests,
    bookedMinorUnits: meter.booked.minorUnits,
    heldTokens: meter.held.tokens,
    heldRequests: meter.held.requests,
    heldMinorUnits: meter.held.minorUnits,
    latestAtMs: meter.latestAtMs,
    baseTokens: meter.base.tokens,
    baseRequests: meter.base.requests,
    baseMinorUnits: meter.base.minorUnits,
    prunedThroughMs: meter.prunedThroughMs,
  };
}

/** A meter row read back; an unreadable column is `STORE_CORRUPT`. */
export function decodeMeter(tenant: string, row: MeterRow): CallMeter {
  const what = 'a model-call meter';
  const amounts = (tokens: unknown, requests: unknown, minorUnits: unknown): CallAmounts => ({
    tokens: decodeAmount(tenant, what, tokens),
    requests: decodeAmount(tenant, what, requests),
    minorUnits: decodeAmount(tenant, what, minorUnits),
  });
  return {
    booked: amounts(row.booked_tokens, row.booked_requests, row.booked_minor_units),
    held: amounts(row.held_tokens, row.held_requests, row.held_minor_units),
    latestAtMs: row.latest_at_ms === null ? null : decodeInstant(tenant, what, row.latest_at_ms),
    base: amounts(row.base_tokens, row.base_requests, row.base_minor_units),
    prunedThroughMs: decodeInstant(tenant, what, row.pruned_through_ms),
  };
}

/** A `quota_call_usage` row's running totals. */
export function decodeUsageTotals(tenant: string, row: { tokens: unknown; requests: unknown; minor_units: unknown }): CallAmounts {
  const what = 'a model-call usage row';
  return { tokens: decodeAmount(tenant, what, row.tokens), requests: decodeAmount(tenant, what, row.requests), minorUnits: decodeAmount(tenant, what, row.minor_units) };
}

/** The usage column of a unit, for the query that finds when a running total reaches an amount. */
export const USAGE_COLUMN = Object.freeze({ tokens: 'tokens', requests: 'requests', minorUnits: 'minor_units' } as const);

/** The columns of `quota_call_reservations` after `tenant`, in the order both adapters select them. */
export const RESERVATION_COLUMNS =
  'call_id, model, agent, end_user, subjects_json, reserved_tokens, reserved_requests, reserved_minor_units, max_output_tokens, at_ms, deadline_ms, status, booked_tokens, booked_requests, booked_minor_units, estimated, closed_at_ms';

/** A `quota_call_reservations` row (`subjects_json` is text on SQLite and already parsed JSONB on PostgreSQL). */
export interface ReservationRow {
  readonly call_id: unknown;
  readonly model: unknown;
  readonly agent: unknown;
  readonly end_user: unknown;
  readonly subjects_json: unknown;
  readonly reserved_tokens: unknown;
  readonly reserved_requests: unknown;
  readonly reserved_minor_units: unknown;
  readonly max_output_tokens: unknown;
  readonly at_ms: unknown;
  readonly deadline_ms: unknown;
  readonly status: unknown;
  readonly booked_tokens: unknown;
  readonly booked_requests: unknown;
  readonly booked_minor_units: unknown;
  readonly estimated: unknown;
  readonly closed_at_ms: unknown;
}

/** The named parameters of a reservation row; `subjects` as JSON text (PostgreSQL casts it to JSONB). */
export function reservationParams(tenant: string, call: CallReservation): Record<string, string | number | null> {
  return {
    tenant,
    callId: call.callId,
    model: call.model,
    agent: call.agent,
    endUser: call.endUser,
    subjects: JSON.stringify(call.subjects),
    reservedTokens: call.reserved.tokens,
    reservedRequests: call.reserved.requests,
    reservedMinorUnits: call.reserved.minorUnits,
    maxOutputTokens: call.maxOutputTokens,
    atMs: call.atMs,
    deadlineMs: call.deadlineMs,
    status: call.status,
    bookedTokens: call.booked?.tokens ?? null,
    bookedRequests: call.booked?.requests ?? null,
    bookedMinorUnits: call.booked?.minorUnits ?? null,
    estimated: call.estimated ? 1 : 0,
    closedAtMs: call.closedAtMs,
  };
}

const STATUSES: readonly CallStatus[] = ['open', 'booked', 'released'];

/** A reservation row read back; an unreadable column is `STORE_CORRUPT`. */
export function decodeReservation(tenant: string, row: ReservationRow): CallReservation {
  const what = 'a model-call reservation';
  const text = (value: unknown): string => {
    if (typeof value !== 'string') throw corrupt(tenant, `an unreadable text in ${what}`);
    return value;
  };
  const subjects = typeof row.subjects_json === 'string' ? safeJson(row.subjects_json) : row.subjects_json;
  if (!Array.isArray(subjects) || !subjects.every((s) => typeof s === 'string')) throw corrupt(tenant, `unreadable subjects in ${what}`);
  if (!(STATUSES as readonly unknown[]).includes(row.status)) throw corrupt(tenant, `an unknown status ${JSON.stringify(row.status)} in ${what}`);
  const amount = (value: unknown) => decodeAmount(tenant, what, value);
  return {
    callId: text(row.call_id),
    model: text(row.model),
    agent: row.agent === null ? null : text(row.agent),
    endUser: row.end_user === null ? null : text(row.end_user),
    subjects: subjects as string[],
    reserved: { tokens: amount(row.reserved_tokens), requests: amount(row.reserved_requests), minorUnits: amount(row.reserved_minor_units) },
    maxOutputTokens: amount(row.max_output_tokens),
    atMs: decodeInstant(tenant, what, row.at_ms),
    deadlineMs: decodeInstant(tenant, what, row.deadline_ms),
    status: row.status as CallStatus,
    booked: row.booked_tokens === null ? null : { tokens: amount(row.booked_tokens), requests: amount(row.booked_requests), minorUnits: amount(row.booked_minor_units) },
    estimated: row.estimated === 1 || row.estimated === true,
    closedAtMs: row.closed_at_ms === null ? null : decodeInstant(tenant, what, row.closed_at_ms),
  };
}

/** Stored ceilings read back through the same parser that admitted them; anything else is `STORE_CORRUPT`. */
export function decodeCallCeilings(tenant: string, json: unknown): CallCeilings {
  try {
    return parseCallCeilings(typeof json === 'string' ? JSON.parse(json) : json);
  } catch {
    throw corrupt(tenant, 'unreadable model-call ceilings');
  }
}

function decodeInstant(tenant: string, what: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw corrupt(tenant, `an unreadable instant in ${what}`);
  return value;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
