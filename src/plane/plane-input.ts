import { describe, requireAmount } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import {
  haltScopeForms,
  parseHaltScope,
  type AgentIdentity,
  type HaltScope,
} from '../core/halt-scope.js';
import { requireIdentifier } from '../core/identifiers.js';
import { MAX_LIST_LIMIT } from './operator-types.js';

// Validators for what reaches the plane from callers (library, HTTP, CLI). Each throws
// INVALID_ARGUMENT naming the field, so every boundary reports bad input the same way.

/** The last instant `periodKey` can name (9999-12-31T23:59:59.999Z); also inside the ULID time range. */
export const MAX_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** The request object itself: a plain object, else `INVALID_ARGUMENT` naming `field`. */
export function requireRecord(field: string, value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

/**
 * `value` as a request object whose every member is one of `members`: a misspelt member (`waitMS`,
 * `budgets`) is `INVALID_ARGUMENT` naming it, never silently ignored, since an ignored `budget`
 * or `waitMs` changes the decision. A member whose value is `undefined` is taken as absent.
 */
export function requireRequest(value: unknown, members: ReadonlySet<string>): Record<string, unknown> {
  const request = requireRecord('request', value);
  for (const [member, given] of Object.entries(request)) {
    if (given === undefined || members.has(member)) continue;
    throw invalidArgument(member, `is not a member of this request; the members are ${[...members].join(', ')}`);
  }
  return request;
}

/**
 * An instant in integer Unix ms between 1970 and the end of year 9999 (docs/design/decisions.md
 * "Time in milliseconds").
 */
export function requireInstantMs(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_INSTANT_MS) {
    throw invalidArgument(
      field,
      `must be an integer Unix instant in milliseconds between 0 and ${MAX_INSTANT_MS}, got ${describe(value)}`,
    );
  }
  return value;
}

/**
 * Longest lease a pass may hold or renew to: 24 hours (86 400 000 ms). A pass holds a concurrency
 * slot until its lease expires, so an unbounded lease would let a runner that dies (or never
 * heartbeats) keep a slot forever; a day is far above any sane heartbeat interval. It also keeps
 * `atMs + leaseMs` an instant a `Date` can show.
 */
export const MAX_LEASE_MS = 86_400_000;

/**
 * A lease in ms: an integer from 1 to {@link MAX_LEASE_MS} (24 hours), else `INVALID_ARGUMENT`
 * naming `field`. Used for every `leaseMs` (admit, resume, heartbeat, dispatch, the plane default).
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

/** A pass's fencing epoch: a positive safe integer. */
export function requireEpoch(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalidArgument(field, `must be a positive integer (the epoch admit or resume answered), got ${describe(value)}`);
  }
  return value;
}

/** A run's width: a non-negative safe integer; absent → 1 (one step in flight). */
export function parseWidth(value: unknown): number {
  return value === undefined ? 1 : requireAmount('width', value);
}

/** A required boolean. */
export function requireBoolean(field: string, value: unknown): boolean {
  if (typeof value !== 'boolean') throw invalidArgument(field, `must be true or false, got ${describe(value)}`);
  return value;
}

const HEX_64 = /^[0-9a-fA-F]{64}$/;

/**
 * The governing agent identity: `name` an identifier, `digest` the SHA-256 of the reviewed
 * manifest as 64 hex digits, stored lowercase so it matches `revision:` halts (which parse either case).
 */
export function parseAgent(value: unknown): AgentIdentity | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgument('agent', `must be an object { name, digest }, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  const name = requireIdentifier('agent.name', record.name);
  const digest = record.digest;
  if (typeof digest !== 'string' || !HEX_64.test(digest)) {
    throw invalidArgument('agent.digest', `must be 64 hex digits (a SHA-256 of the manifest), got ${describe(digest)}`);
  }
  return { name, digest: digest.toLowerCase() };
}

/** The delegation chain: an array of principal identifiers, root person first (may be empty). */
export function parseChain(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) {
    throw invalidArgument('chain', `must be an array of principal ids, root person first, got ${describe(value)}`);
  }
  return value.map((principal: unknown, index) => requireIdentifier(`chain[${index}]`, principal));
}

/** A halt's reason: a string that is not blank. */
export function requireReason(value: unknown): string {
  if (typeof value !== 'string' || value.trim().length === 0) {
    throw invalidArgument('reason', `is required: say why the work must stop, got ${describe(value)}`);
  }
  return value;
}

/**
 * A halt scope given as its key string or as a `HaltScope` value. An unparseable one throws
 * `INVALID_ARGUMENT` on `scope` listing the four forms (docs/design/rules.md#d12); agent names and
 * principals must also be identifiers (docs/concepts/glossary.md#names).
 */
export function parseScope(value: unknown): HaltScope {
  const text = typeof value === 'string' ? value : scopeObjectKey(value);
  const scope = text === null ? null : parseHaltScope(text);
  if (scope === null) {
    throw invalidArgument('scope', `must be one of ${haltScopeForms()}, got ${describe(text ?? value)}`);
  }
  if (scope.kind === 'agent') requireIdentifier('scope', scope.name);
  if (scope.kind === 'subject') requireIdentifier('scope', scope.principal);
  return scope;
}

// A HaltScope value is checked by spelling it as a key and parsing that, so both forms obey one rule.
function scopeObjectKey(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const rest = (field: string): string | null => (typeof record[field] === 'string' ? (record[field] as string) : null);
  switch (record.kind) {
    case 'tenant':
      return 'tenant';
    case 'agent':
      return rest('name') === null ? null : `agent:${rest('name')}`;
    case 'revision':
      return rest('digest') === null ? null : `revision:${rest('digest')}`;
    case 'subject':
      return rest('principal') === null ? null : `subject:${rest('principal')}`;
    default:
      return null;
  }
}

/** A listing's page size: absent → `fallback`; otherwise an integer from 1 to `MAX_LIST_LIMIT` (1000). */
export function parseLimit(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > MAX_LIST_LIMIT) {
    throw invalidArgument('limit', `must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${describe(value)}`);
  }
  return value;
}
