import { describe, requireAmount } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { parseHaltScope, type Halt, type HaltScope } from '../core/halt-scope.js';
import { normaliseRunId, requireIdentifier } from '../core/identifiers.js';
import { parseOperator } from '../core/operator.js';
import { requireInstantMs } from '../core/instant.js';
import { isPeriodKey } from '../core/period.js';
import { parseRateCeilings, parseStoredQuota, type TenantQuota } from '../core/quota.js';
import { requireSpend } from '../core/spend.js';
import type { QuotaSettlement, RateReservation, SpendHold } from './types.js';
import type { HaltLift } from '../core/run-events.js';

/*
 * The input rules of the store port (store.ts), one set for every caller: `validated()`
 * (validated-store.ts) applies them to every port method, and the plane applies the same functions
 * to its callers' input. The adapters themselves check nothing. Each function returns a
 * normalised copy or throws `INVALID_ARGUMENT` naming the field and saying what is expected.
 */

/**
 * Longest lease a pass may hold or renew to: 24 hours (86 400 000 ms). A pass holds a concurrency
 * slot until its lease expires, so an unbounded lease would let a runner that dies (or never
 * heartbeats) keep a slot forever; a day is far above any sane heartbeat interval. It also keeps
 * `atMs + leaseMs` an instant a `Date` can show. The HTTP schemas take their `maximum` from it.
 */
export const MAX_LEASE_MS = 86_400_000;

/**
 * A lease in ms: an integer from 1 to {@link MAX_LEASE_MS} (24 hours), else `INVALID_ARGUMENT`
 * naming `field`. Every `leaseMs` of the port and of the plane (admit, resume, heartbeat,
 * dispatch, the plane's default lease).
 */
export function requireLeaseMs(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_LEASE_MS) {
    throw invalidArgument(
      field,
      `must be an integer number of milliseconds from 1 to ${MAX_LEASE_MS} (24 hours); heartbeat to keep a pass longer, got ${describe(value)}`,
    );
  }
  return value;
}

/** A listing limit: an integer of at least 1. */
export function requireLimit(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalidArgument(field, `must be an integer of at least 1, got ${describe(value)}`);
  }
  return value;
}

/** Who lifted a halt and when: `{ atMs, by }`, else `INVALID_ARGUMENT` naming the member. */
export function requireHaltLift(field: string, value: unknown): HaltLift {
  const record = requireObject(field, value);
  return { atMs: requireInstantMs(`${field}.atMs`, record.atMs), by: parseOperator(record.by, `${field}.by`) };
}

/** A pass's fencing epoch: a safe integer of at least 1, else `INVALID_ARGUMENT` naming `field`. */
export function requireEpoch(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalidArgument(field, `must be a pass epoch, a positive integer (the epoch admit or resume answered), got ${describe(value)}`);
  }
  return value;
}

/** `true` or `false`, nothing truthy. */
export function requireBoolean(field: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalidArgument(field, `must be true or false, got ${describe(value)}`);
  return value;
}

/** A billing-period key, `YYYY-MM` or `YYYY-MM-DD` (docs/design/rules.md#g5). */
export function requirePeriodKey(field: string, value: unknown): string {
  if (!isPeriodKey(value)) {
    throw invalidArgument(field, `must be a billing period key YYYY-MM or YYYY-MM-DD, got ${describe(value)}`);
  }
  return value;
}

/** A spend hold `{ period, amount }`, or `null` for none. */
export function requireSpendHold(field: string, value: unknown): SpendHold | null {
  if (value === undefined || value === null) return null;
  const record = requireObject(field, value);
  return { period: requirePeriodKey(`${field}.period`, record.period), amount: requireSpend(`${field}.amount`, record.amount) };
}

/** A halt scope object; agent names and principals are identifiers, digests 64 hex (lowercased; docs/design/rules.md#d9). */
export function requireHaltScope(field: string, value: unknown): HaltScope {
  const record = requireObject(field, value);
  switch (record.kind) {
    case 'tenant':
      return { kind: 'tenant' };
    case 'agent':
      return { kind: 'agent', name: requireIdentifier(`${field}.name`, record.name) };
    case 'subject':
      return { kind: 'subject', principal: requireIdentifier(`${field}.principal`, record.principal) };
    case 'revision': {
      const parsed = typeof record.digest === 'string' ? parseHaltScope(`revision:${record.digest}`) : null;
      if (parsed === null) throw invalidArgument(`${field}.digest`, `must be 64 hex digits, got ${describe(record.digest)}`);
      return parsed;
    }
    default:
      throw invalidArgument(`${field}.kind`, `must be 'tenant', 'agent', 'revision' or 'subject', got ${describe(record.kind)}`);
  }
}

/** The plane-wide halt `{ scope: { kind: 'plane' }, reason, by, atMs, reachesRunning? }` (docs/design/rules.md#c49). */
export function requirePlaneHalt(field: string, value: unknown): Halt {
  const record = requireObject(field, value);
  const scope = requireObject(`${field}.scope`, record.scope);
  if (scope.kind !== 'plane') throw invalidArgument(`${field}.scope.kind`, `must be 'plane', got ${describe(scope.kind)}`);
  // The other members obey a tenant halt's rules; only the scope differs.
  const { reason, by, atMs, reachesRunning } = requireHalt(field, { ...record, scope: { kind: 'tenant' } });
  return reachesRunning === true ? { scope: { kind: 'plane' }, reason, by, atMs, reachesRunning } : { scope: { kind: 'plane' }, reason, by, atMs };
}

/** A halt `{ scope, reason, by, atMs, reachesRunning? }` (docs/design/rules.md#c44); the store does not judge the reason beyond its type (docs/design/rules.md#c22). */
export function requireHalt(field: string, value: unknown): Halt {
  const record = requireObject(field, value);
  if (typeof record.reason !== 'string') throw invalidArgument(`${field}.reason`, `must be a string, got ${describe(record.reason)}`);
  return {
    scope: requireHaltScope(`${field}.scope`, record.scope),
    reason: record.reason,
    by: parseOperator(record.by, `${field}.by`),
    atMs: requireInstantMs(`${field}.atMs`, record.atMs),
    ...(record.reachesRunning !== undefined && requireBoolean(`${field}.reachesRunning`, record.reachesRunning) ? { reachesRunning: true } : {}),
  };
}

/** A pass receipt: run id normalised, epoch ≥ 1, period key or `null`. */
export function requireSettlement(field: string, value: unknown): QuotaSettlement {
  const record = requireObject(field, value);
  return {
    run: normaliseRunId(`${field}.run`, record.run),
    epoch: requireEpoch(`${field}.epoch`, record.epoch),
    period: record.period === null || record.period === undefined ? null : requirePeriodKey(`${field}.period`, record.period),
    spend: requireSpend(`${field}.spend`, record.spend),
    releaseSlot: requireBoolean(`${field}.releaseSlot`, record.releaseSlot),
    concludes: requireBoolean(`${field}.concludes`, record.concludes),
  };
}

/**
 * A rate reservation. Ceiling windows are not range-checked: an uncountable window
 * is a refusal, not a fault (docs/design/rules.md#c39, #d7).
 */
export function requireRateReservation(field: string, value: unknown): RateReservation {
  const record = requireObject(field, value);
  return {
    grant: requireIdentifier(`${field}.grant`, record.grant),
    run: normaliseRunId(`${field}.run`, record.run),
    dispatch: requireIdentifier(`${field}.dispatch`, record.dispatch),
    ceilings: parseRateCeilings(record.ceilings, `${field}.ceilings`),
    atMs: requireInstantMs(`${field}.atMs`, record.atMs),
    exempt: requireBoolean(`${field}.exempt`, record.exempt),
  };
}

/** A `reserve` request (store.ts `TenantStore.reserve`): run id normalised, stored quota, optional hold, instant. */
export function requireReserveRequest(value: unknown): { run: string; quota: TenantQuota; hold: SpendHold | null; atMs: number } {
  const record = requireObject('request', value);
  return {
    run: normaliseRunId('run', record.run),
    quota: parseStoredQuota(record.quota, 'quota'),
    hold: requireSpendHold('hold', record.hold),
    atMs: requireInstantMs('atMs', record.atMs),
  };
}

/** A non-null, non-array object, as a record of its members (`INVALID_ARGUMENT` naming `field` otherwise). */
export function requireObject(field: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

/** A width: how many steps a run may have in flight, a non-negative integer. */
export function requireWidth(field: string, value: unknown): number {
  return requireAmount(field, value);
}

/** A list of agent names (each an identifier), deduplicated in first-seen order. Throws `INVALID_ARGUMENT` naming the element. */
export function requireAgentNames(field: string, value: unknown): string[] {
  if (!Array.isArray(value)) throw invalidArgument(field, `must be an array of agent names, got ${describe(value)}`);
  return [...new Set(value.map((name: unknown, index) => requireIdentifier(`${field}[${index}]`, name)))];
}
