import { describe } from './amounts.js';
import { invalidArgument } from './errors.js';
import { parseQuota, type TenantQuota } from './quota.js';

/**
 * A partial change of a tenant's quota with JSON Merge Patch semantics (RFC 7396): a member that
 * is absent keeps its value, `null` removes it (a ceiling becomes unlimited, `period` goes back
 * to `monthly`, a grant's rate ceilings are dropped), and any other value replaces it. Inside
 * `rateCeilings` each grant is merged on its own: `{ "tool://a/b": [...] }` replaces that grant's
 * ceilings and leaves the others, `{ "tool://a/b": null }` removes that grant, and
 * `rateCeilings: null` removes every grant's ceilings.
 */
export interface QuotaPatch {
  readonly maxConcurrentRuns?: number | null;
  readonly maxTokensPerPeriod?: number | null;
  readonly maxMinorUnitsPerPeriod?: number | null;
  readonly period?: TenantQuota['period'] | null;
  readonly rateCeilings?: Readonly<Record<string, unknown>> | null;
}

/**
 * Applies `patch` (untrusted, see {@link QuotaPatch}) to `current` (`null`: none set, read as no
 * ceilings and monthly periods) and answers the whole new quota, validated as `parseQuota`
 * validates a quota being set. Pure. Throws `INVALID_ARGUMENT` naming the field: a patch that is
 * not an object, an unknown member, or a value `parseQuota` refuses.
 */
export function applyQuotaPatch(current: TenantQuota | null, patch: unknown, field = 'patch'): TenantQuota {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) {
    throw invalidArgument(field, `must be an object whose members change the quota (null removes one), got ${describe(patch)}`);
  }
  const merged: Record<string, unknown> = { ...(current ?? {}) };
  for (const [member, value] of Object.entries(patch as Record<string, unknown>)) {
    if (member === 'rateCeilings' && value !== null) {
      merged.rateCeilings = mergeGrants(current?.rateCeilings, value, `${field}.rateCeilings`);
    } else if (value === null) {
      delete merged[member];
    } else {
      merged[member] = value;
    }
  }
  if (merged.rateCeilings !== undefined && Object.keys(merged.rateCeilings as object).length === 0) delete merged.rateCeilings;
  return parseQuota(merged, field);
}

function mergeGrants(current: Readonly<Record<string, unknown>> | undefined, value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object of grant → ceilings (null removes a grant), got ${describe(value)}`);
  }
  const grants: Record<string, unknown> = { ...(current ?? {}) };
  for (const [grant, ceilings] of Object.entries(value as Record<string, unknown>)) {
    if (ceilings === null) delete grants[grant];
    else grants[grant] = ceilings;
  }
  return grants;
}
