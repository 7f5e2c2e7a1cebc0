import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { haltScopeForms, parseHaltScope, type HaltScope } from '../core/halt-scope.js';
import { requireIdentifier } from '../core/identifiers.js';
import { requireObject, requireWidth } from '../store/store-arguments.js';
import { MAX_LIST_LIMIT } from './operator-types.js';

// The plane's own rules for what reaches it from callers (library, HTTP, CLI): request members,
// defaults, halt scopes given as keys, page sizes. Every rule the store port shares (instants,
// leases, epochs, agents, chains, run ids, spends) is the port's own function (store/*-arguments.ts,
// core/), applied here once, so the plane and `validated()` cannot disagree. Each throws
// INVALID_ARGUMENT naming the field.

/**
 * `value` as a request object whose every member is one of `members`: a misspelt member (`waitMS`,
 * `budgets`) is `INVALID_ARGUMENT` naming it, never silently ignored, since an ignored `budget`
 * or `waitMs` changes the decision. A member whose value is `undefined` is taken as absent.
 */
export function requireRequest(value: unknown, members: ReadonlySet<string>): Record<string, unknown> {
  const request = requireObject('request', value);
  for (const [member, given] of Object.entries(request)) {
    if (given === undefined || members.has(member)) continue;
    throw invalidArgument(member, `is not a member of this request; the members are ${[...members].join(', ')}`);
  }
  return request;
}

/** A run's width: a non-negative safe integer; absent → 1 (one step in flight). */
export function parseWidth(value: unknown): number {
  return value === undefined ? 1 : requireWidth('width', value);
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
