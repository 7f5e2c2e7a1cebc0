import { describe } from './amounts.js';
import { invalidArgument } from './errors.js';
import { patchMembers } from './merge-patch.js';
import { parseQuota, type TenantQuota } from './quota.js';

/**
 * A partial change of a tenant's quota with JSON Merge Patch semantics (RFC 7396): a member that
 * is absent (or `undefined`, at any depth: {@link patchMembers}) keeps its value, `null` removes it
 * (a ceiling becomes unlimited, `period` goes back to `monthly`, a grant's rate ceilings are
 * dropped), and any other value replaces it. Inside `rateCeilings` each grant is merged on its own:
 * `{ "tool://a/b": [...] }` replaces that grant's ceilings and leaves the others,
 * `{ "tool://a/b": null }` removes that grant, and `rateCeilings: null` removes every grant's
 * ceilings. `agents` is merged as RFC 7396 says, two levels deep: `{ agents: { "refund-bot": { maxConcurrentRuns: 5 } } }` sets that one ceiling of
 * that agent and keeps its others, `{ "refund-bot": { maxConcurrentRuns: null } }` removes that
 * ceiling, `{ "refund-bot": null }` removes the agent's ceilings, `agents: null` removes every
 * agent's (an agent left with no ceiling is dropped).
 */
export interface QuotaPatch {
  readonly maxConcurrentRuns?: number | null;
  readonly maxTokensPerPeriod?: number | null;
  readonly maxMinorUnitsPerPeriod?: number | null;
  readonly period?: TenantQuota['period'] | null;
  readonly rateCeilings?: Readonly<Record<string, unknown>> | null;
  readonly agents?: Readonly<Record<string, unknown>> | null;
  readonly alertThresholds?: readonly unknown[] | null;
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
  for (const [member, value] of patchMembers(patch)) {
    if (member === 'rateCeilings' && value !== null) {
      merged.rateCeilings = mergeGrants(current?.rateCeilings, value, `${field}.rateCeilings`);
    } else if (member === 'agents' && value !== null) {
      merged.agents = mergeAgents(current?.agents, value, `${field}.agents`);
    } else if (value === null) {
      delete merged[member];
    } else {
      merged[member] = value;
    }
  }
  if (merged.rateCeilings !== undefined && Object.keys(merged.rateCeilings as object).length === 0) delete merged.rateCeilings;
  if (merged.agents !== undefined && Object.keys(merged.agents as object).length === 0) delete merged.agents;
  return parseQuota(merged, field);
}

function mergeGrants(current: Readonly<Record<string, unknown>> | undefined, value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object of grant → ceilings (null removes a grant), got ${describe(value)}`);
  }
  const grants: Record<string, unknown> = { ...(current ?? {}) };
  for (const [grant, ceilings] of patchMembers(value as object)) {
    if (ceilings === null) delete grants[grant];
    else grants[grant] = ceilings;
  }
  return grants;
}

function mergeAgents(current: Readonly<Record<string, unknown>> | undefined, value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object of agent name → ceilings (null removes an agent), got ${describe(value)}`);
  }
  const agents: Record<string, unknown> = {};
  const put = (agent: string, ceilings: unknown): void => {
    Object.defineProperty(agents, agent, { value: ceilings, enumerable: true, writable: true, configurable: true });
  };
  for (const [agent, ceilings] of Object.entries(current ?? {})) put(agent, ceilings);
  for (const [agent, change] of patchMembers(value as object)) {
    if (change === null) {
      delete agents[agent];
      continue;
    }
    if (typeof change !== 'object' || Array.isArray(change)) {
      throw invalidArgument(`${field}[${JSON.stringify(agent)}]`, `must be an object of ceilings (null removes the agent), got ${describe(change)}`);
    }
    const ceilings: Record<string, unknown> = { ...(Object.hasOwn(agents, agent) ? (agents[agent] as object) : {}) };
    for (const [name, ceiling] of patchMembers(change)) {
      if (ceiling === null) delete ceilings[name];
      else ceilings[name] = ceiling;
    }
    if (Object.keys(ceilings).length === 0) delete agents[agent];
    else put(agent, ceilings);
  }
  return agents;
}
