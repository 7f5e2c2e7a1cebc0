import { isAmount } from './amounts.js';
import { invalidArgument } from './errors.js';
import { identifierProblem } from './identifiers.js';
import { PERIODS, type Period } from './period.js';

// Model-call ceilings (docs/concepts/model-calls.md, docs/design/rules.md#m1): how many tokens,
// requests or minor units a tenant's model calls may count in any sliding window, or per billing
// period, over the whole tenant, one agent, one model or model group, and one end user.

/** What a model-call ceiling counts: tokens (input + output), requests (one per call), or money in minor units. */
export type CallUnit = 'tokens' | 'requests' | 'minorUnits';

/** Every {@link CallUnit}, in the order listings show them. */
export const CALL_UNITS: readonly CallUnit[] = Object.freeze(['tokens', 'requests', 'minorUnits']);

/** The widest sliding window a model-call ceiling may have: one day, 86 400 s (docs/design/rules.md#m2). */
export const MAX_CALL_WINDOW_SECONDS = 86_400;

/** Most ceilings one subject (the tenant, an agent, a model, a group, an end user) may have. */
export const MAX_CEILINGS_PER_SUBJECT = 8;

/** Most named agents, models, groups or end-user overrides one tenant's configuration may list. */
export const MAX_CALL_SUBJECTS = 1000;

/** Output tokens a call that declares no output cap is reserved for, unless the tenant sets another (docs/design/rules.md#m5). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096;

/**
 * The most one model call may reserve or book in any unit: 10^12 tokens (or minor units). Running
 * totals add every call up for the meter's life and must stay below 2^53, so a report of an
 * impossible size is refused rather than saturating the meter (docs/design/rules.md#m5).
 */
export const MAX_CALL_AMOUNT = 1_000_000_000_000;

/** How long a model call may stay in flight before its reservation is booked as an estimate: 15 minutes. */
export const DEFAULT_CALL_LEASE_MS = 15 * 60_000;

/** The shortest lease a model call may be given: one second. */
export const MIN_CALL_LEASE_MS = 1000;

/** The longest a model call's reservation may be held: one day. */
export const MAX_CALL_LEASE_MS = 86_400_000;

/**
 * One model-call ceiling. Exactly one of:
 * - `windowSeconds` (1 … 86 400): at most `limit` units in any sliding window of that many seconds;
 * - `period` (`monthly` | `daily`, UTC): at most `limit` units per billing period.
 *
 * `limit` is a safe integer ≥ 0 (0 admits nothing). Booked usage plus the reservations of calls in
 * flight count against it (docs/design/rules.md#m1, #m3).
 */
export type CallCeiling =
  | { readonly unit: CallUnit; readonly limit: number; readonly windowSeconds: number }
  | { readonly unit: CallUnit; readonly limit: number; readonly period: Period };

/** A model group: the models it covers and the ceilings shared by all their calls together. */
export interface CallModelGroup {
  readonly models: readonly string[];
  readonly ceilings: readonly CallCeiling[];
}

/**
 * A tenant's model-call ceilings (docs/concepts/model-calls.md). Every member is optional:
 * - `tenant`: ceilings over every model call of the tenant;
 * - `agents`: per agent name; `models`: per model id; `groups`: per named group of models;
 * - `endUsers.default`: the ceilings each end user has on their own; `endUsers.overrides`: an end
 *   user's own ceilings, replacing the default for that user;
 * - `defaultMaxOutputTokens`: what a call that declares no output cap reserves for its output
 *   (default {@link DEFAULT_MAX_OUTPUT_TOKENS});
 * - `leaseMs`: how long a call may stay in flight before its reservation is booked as an estimate
 *   (default {@link DEFAULT_CALL_LEASE_MS}, at most {@link MAX_CALL_LEASE_MS}).
 */
export interface CallCeilings {
  readonly tenant?: readonly CallCeiling[];
  readonly agents?: Readonly<Record<string, readonly CallCeiling[]>>;
  readonly models?: Readonly<Record<string, readonly CallCeiling[]>>;
  readonly groups?: Readonly<Record<string, CallModelGroup>>;
  readonly endUsers?: {
    readonly default?: readonly CallCeiling[];
    readonly overrides?: Readonly<Record<string, readonly CallCeiling[]>>;
  };
  readonly defaultMaxOutputTokens?: number;
  readonly leaseMs?: number;
}

/** The configuration of a tenant nobody configured: no ceilings, the defaults. */
export const NO_CALL_CEILINGS: CallCeilings = Object.freeze({});

/** True for a ceiling counted over a sliding window (else it is counted per billing period). */
export function isWindowCeiling(ceiling: CallCeiling): ceiling is CallCeiling & { readonly windowSeconds: number } {
  return 'windowSeconds' in ceiling;
}

/** "at most 1000 tokens per 60 seconds" or "at most 5000 minorUnits per monthly period", as refusals and listings phrase a ceiling. */
export function describeCallCeiling(ceiling: CallCeiling): string {
  if (isWindowCeiling(ceiling)) {
    return `at most ${ceiling.limit} ${ceiling.unit} per ${ceiling.windowSeconds} second${ceiling.windowSeconds === 1 ? '' : 's'}`;
  }
  return `at most ${ceiling.limit} ${ceiling.unit} per ${ceiling.period === 'monthly' ? 'UTC month' : 'UTC day'}`;
}

/**
 * Reads `value` as {@link CallCeilings}, throwing `INVALID_ARGUMENT` that names the first bad member
 * by its path under `field` (`ceilings.models["gpt-4o"][1].windowSeconds`) and says what it must be.
 * Unknown members are refused, so a misspelt one is never silently ignored. Answers a frozen copy.
 */
export function parseCallCeilings(value: unknown, field = 'ceilings'): CallCeilings {
  const object = requireObject(field, value);
  refuseUnknown(field, object, ['tenant', 'agents', 'models', 'groups', 'endUsers', 'defaultMaxOutputTokens', 'leaseMs']);
  const out: Record<string, unknown> = {};
  if (object.tenant !== undefined) out.tenant = parseCeilingList(`${field}.tenant`, object.tenant);
  if (object.agents !== undefined) out.agents = parseNamed(`${field}.agents`, object.agents, (path, list) => parseCeilingList(path, list));
  if (object.models !== undefined) out.models = parseNamed(`${field}.models`, object.models, (path, list) => parseCeilingList(path, list));
  if (object.groups !== undefined) out.groups = parseNamed(`${field}.groups`, object.groups, parseGroup);
  if (object.endUsers !== undefined) {
    const path = `${field}.endUsers`;
    const users = requireObject(path, object.endUsers);
    refuseUnknown(path, users, ['default', 'overrides']);
    const parsed: Record<string, unknown> = {};
    if (users.default !== undefined) parsed.default = parseCeilingList(`${path}.default`, users.default);
    if (users.overrides !== undefined) parsed.overrides = parseNamed(`${path}.overrides`, users.overrides, (p, list) => parseCeilingList(p, list));
    out.endUsers = Object.freeze(parsed);
  }
  if (object.defaultMaxOutputTokens !== undefined) {
    out.defaultMaxOutputTokens = requireWhole(`${field}.defaultMaxOutputTokens`, object.defaultMaxOutputTokens, 1, Number.MAX_SAFE_INTEGER);
  }
  if (object.leaseMs !== undefined) out.leaseMs = requireWhole(`${field}.leaseMs`, object.leaseMs, MIN_CALL_LEASE_MS, MAX_CALL_LEASE_MS);
  return Object.freeze(out) as CallCeilings;
}

function parseGroup(path: string, value: unknown): CallModelGroup {
  const group = requireObject(path, value);
  refuseUnknown(path, group, ['models', 'ceilings']);
  if (!Array.isArray(group.models) || group.models.length === 0) {
    throw invalidArgument(`${path}.models`, 'must be a non-empty array of model ids');
  }
  const models = group.models.map((model, index) => requireName(`${path}.models[${index}]`, model));
  return Object.freeze({ models: Object.freeze(models), ceilings: parseCeilingList(`${path}.ceilings`, group.ceilings ?? []) });
}

function parseCeilingList(path: string, value: unknown): readonly CallCeiling[] {
  if (!Array.isArray(value)) throw invalidArgument(path, 'must be an array of ceilings such as { "unit": "tokens", "limit": 100000, "windowSeconds": 60 }');
  if (value.length > MAX_CEILINGS_PER_SUBJECT) throw invalidArgument(path, `may list at most ${MAX_CEILINGS_PER_SUBJECT} ceilings, got ${value.length}`);
  return Object.freeze(value.map((entry, index) => parseCeiling(`${path}[${index}]`, entry)));
}

function parseCeiling(path: string, value: unknown): CallCeiling {
  const ceiling = requireObject(path, value);
  refuseUnknown(path, ceiling, ['unit', 'limit', 'windowSeconds', 'period']);
  if (!(CALL_UNITS as readonly unknown[]).includes(ceiling.unit)) {
    throw invalidArgument(`${path}.unit`, `must be one of ${CALL_UNITS.join(', ')}, got ${JSON.stringify(ceiling.unit)}`);
  }
  const unit = ceiling.unit as CallUnit;
  const limit = requireWhole(`${path}.limit`, ceiling.limit, 0, Number.MAX_SAFE_INTEGER);
  if ((ceiling.windowSeconds === undefined) === (ceiling.period === undefined)) {
    throw invalidArgument(path, 'needs exactly one of windowSeconds (a sliding window, 1 to 86400) or period ("monthly" or "daily")');
  }
  if (ceiling.windowSeconds !== undefined) {
    const windowSeconds = requireWhole(`${path}.windowSeconds`, ceiling.windowSeconds, 1, MAX_CALL_WINDOW_SECONDS);
    return Object.freeze({ unit, limit, windowSeconds });
  }
  if (!(PERIODS as readonly unknown[]).includes(ceiling.period)) {
    throw invalidArgument(`${path}.period`, `must be one of ${PERIODS.join(', ')}, got ${JSON.stringify(ceiling.period)}`);
  }
  return Object.freeze({ unit, limit, period: ceiling.period as Period });
}

function parseNamed<T>(path: string, value: unknown, parse: (path: string, value: unknown) => T): Readonly<Record<string, T>> {
  const object = requireObject(path, value);
  const names = Object.keys(object);
  if (names.length > MAX_CALL_SUBJECTS) throw invalidArgument(path, `may name at most ${MAX_CALL_SUBJECTS}, got ${names.length}`);
  const out: Record<string, T> = {};
  for (const name of names) {
    const entry = `${path}[${JSON.stringify(name)}]`;
    requireName(entry, name);
    // Defined, not assigned: `out["__proto__"] = …` would set the prototype and drop the entry.
    Object.defineProperty(out, name, { value: parse(entry, object[name]), enumerable: true, writable: true, configurable: true });
  }
  return Object.freeze(out);
}

function requireName(path: string, value: unknown): string {
  const problem = identifierProblem(value);
  if (problem !== null) throw invalidArgument(path, `is not a usable name: ${problem}`);
  return value as string;
}

function requireObject(path: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidArgument(path, 'must be an object');
  return value as Record<string, unknown>;
}

function refuseUnknown(path: string, object: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(object)) {
    if (!known.includes(key)) throw invalidArgument(`${path}.${key}`, `is not a member; the members are ${known.join(', ')}`);
  }
}

function requireWhole(path: string, value: unknown, min: number, max: number): number {
  if (!isAmount(value) || value < min || value > max) {
    throw invalidArgument(path, `must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return value;
}
