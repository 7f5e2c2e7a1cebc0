import { parseAlertThresholds, type AlertThreshold } from './alert-thresholds.js';
import { describe, requireAmount } from './amounts.js';
import { invalidArgument } from './errors.js';
import { patchMembers } from './merge-patch.js';
import { requireCustomerTenant, requireIdentifier, requireTenant } from './identifiers.js';

/**
 * The plane-wide ceiling (docs/design/rules.md#k1–#k6): ceilings over every tenant of one store at
 * once, for a resource they all share (one GPU pool, one provider account). Every member is
 * optional: absent is unlimited, `0` allows nothing (docs/design/decisions.md "Absent means
 * unlimited, 0 means nothing"). An admission needs room under these *and* under its tenant's quota;
 * the refusal names the one that bound it (`bound`).
 * - `maxConcurrentRuns`: slots held across all tenants.
 * - `agents`: per agent name, `{ maxConcurrentRuns }` over the slots of that agent's runs in every
 *   tenant. A run without an agent identity is covered by none of them.
 * - `weights`: per tenant, a whole number ≥ 1 (default 1): its share when freed slots are handed
 *   out in turn to waiting tenants while the plane-wide ceiling binds (docs/design/rules.md#w12,
 *   #w13). Stored and validated here; admissions that do not wait never read it.
 *
 * Example: `{ maxConcurrentRuns: 50, agents: { 'refund-bot': { maxConcurrentRuns: 5 } } }`.
 */
export interface PlaneCeiling {
  readonly maxConcurrentRuns?: number;
  readonly agents?: Readonly<Record<string, PlaneAgentCeiling>>;
  readonly weights?: Readonly<Record<string, number>>;
  /**
   * The spend-alert thresholds of every tenant whose quota sets none (absent: 80 % and 100 %; `[]`:
   * none; docs/design/rules.md#e2). Applies to crossings from when it is set.
   */
  readonly alertThresholds?: readonly AlertThreshold[];
}

/** The plane-wide ceiling of one agent name, across every tenant. */
export interface PlaneAgentCeiling {
  readonly maxConcurrentRuns?: number;
}

/** The plane nobody configured: no plane-wide ceiling at all. */
export const NO_PLANE_CEILING: PlaneCeiling = Object.freeze({});

/** True when the plane bounds concurrency at all (a plane-wide or a plane-wide per-agent ceiling). */
export function boundsPlane(plane: PlaneCeiling | null | undefined): boolean {
  if (plane === null || plane === undefined) return false;
  if (plane.maxConcurrentRuns !== undefined) return true;
  return Object.values(plane.agents ?? {}).some((agent) => agent.maxConcurrentRuns !== undefined);
}

/** The plane-wide ceiling on `agent`'s runs, or `undefined` when there is none. */
export function planeAgentLimit(plane: PlaneCeiling | null | undefined, agent: string | null | undefined): number | undefined {
  if (plane?.agents === undefined || agent === null || agent === undefined) return undefined;
  return Object.hasOwn(plane.agents, agent) ? plane.agents[agent]?.maxConcurrentRuns : undefined;
}

/** A tenant's weight in the round robin of waiting admissions (default 1). */
export function tenantWeight(plane: PlaneCeiling | null | undefined, tenant: string): number {
  if (plane?.weights === undefined || !Object.hasOwn(plane.weights, tenant)) return 1;
  return plane.weights[tenant] ?? 1;
}

const PLANE_FIELDS = new Set(['maxConcurrentRuns', 'agents', 'weights', 'alertThresholds']);

function own<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function requireObjectOf(field: string, value: unknown, shape: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object of ${shape}, got ${describe(value)}`);
  }
  return value as Record<string, unknown>;
}

/**
 * Validates an untrusted plane-wide ceiling and returns a normalised copy (`null` members are
 * absent; an agent left without a ceiling is dropped). Throws `INVALID_ARGUMENT` naming the field:
 * an unknown member, a ceiling that is not a non-negative safe integer, an agent name or tenant id
 * that is not an identifier, or a weight below 1.
 */
export function parsePlaneCeiling(value: unknown, field = 'plane'): PlaneCeiling {
  const record = requireObjectOf(field, value, 'plane ceilings { maxConcurrentRuns, agents, weights }');
  for (const key of Object.keys(record)) {
    if (!PLANE_FIELDS.has(key)) {
      throw invalidArgument(`${field}.${key}`, `is not a plane ceiling field; use ${[...PLANE_FIELDS].join(', ')}`);
    }
  }
  const plane: { -readonly [K in keyof PlaneCeiling]: PlaneCeiling[K] } = {};
  if (record.maxConcurrentRuns !== undefined && record.maxConcurrentRuns !== null) {
    plane.maxConcurrentRuns = requireAmount(`${field}.maxConcurrentRuns`, record.maxConcurrentRuns);
  }
  if (record.agents !== undefined && record.agents !== null) {
    const agents: Record<string, PlaneAgentCeiling> = {};
    const given = requireObjectOf(`${field}.agents`, record.agents, 'agent name → { maxConcurrentRuns }');
    for (const [agent, ceiling] of Object.entries(given)) {
      requireIdentifier(`${field}.agents key`, agent);
      const agentField = `${field}.agents[${JSON.stringify(agent)}]`;
      const members = requireObjectOf(agentField, ceiling, '{ maxConcurrentRuns }');
      for (const key of Object.keys(members)) {
        if (key !== 'maxConcurrentRuns') {
          throw invalidArgument(`${agentField}.${key}`, 'is not a plane-wide agent ceiling; use maxConcurrentRuns');
        }
      }
      if (members.maxConcurrentRuns === undefined || members.maxConcurrentRuns === null) continue;
      own(agents, agent, { maxConcurrentRuns: requireAmount(`${agentField}.maxConcurrentRuns`, members.maxConcurrentRuns) });
    }
    if (Object.keys(agents).length > 0) plane.agents = agents;
  }
  if (record.weights !== undefined && record.weights !== null) {
    const weights: Record<string, number> = {};
    const given = requireObjectOf(`${field}.weights`, record.weights, 'tenant → weight (a whole number ≥ 1)');
    for (const [tenant, weight] of Object.entries(given)) {
      requireTenant(`${field}.weights key`, tenant);
      if (weight === null) continue;
      requireCustomerTenant(`${field}.weights key`, tenant);
      const amount = requireAmount(`${field}.weights[${JSON.stringify(tenant)}]`, weight);
      if (amount < 1) {
        throw invalidArgument(
          `${field}.weights[${JSON.stringify(tenant)}]`,
          'must be at least 1: a weight is a share of freed slots, and a tenant never gets none (leave it out for the default 1)',
        );
      }
      own(weights, tenant, amount);
    }
    if (Object.keys(weights).length > 0) plane.weights = weights;
  }
  if (record.alertThresholds !== undefined && record.alertThresholds !== null) {
    plane.alertThresholds = parseAlertThresholds(record.alertThresholds, `${field}.alertThresholds`);
  }
  return plane;
}

/**
 * Applies a JSON Merge Patch (RFC 7396) to the plane-wide ceiling: an absent member keeps its
 * value (so does one given as `undefined`, at any depth: {@link patchMembers}), `null` removes it,
 * anything else replaces it; `agents` and `weights` merge per key (`{ agents: { 'refund-bot': null } }`
 * removes that agent's ceiling). Pure; validates the result
 * as {@link parsePlaneCeiling} does. Throws `INVALID_ARGUMENT` naming the field.
 */
export function applyPlanePatch(current: PlaneCeiling | null, patch: unknown, field = 'patch'): PlaneCeiling {
  const changes = requireObjectOf(field, patch, 'members that change the plane ceiling (null removes one)');
  const merged: Record<string, unknown> = { ...(current ?? {}) };
  for (const [member, value] of patchMembers(changes)) {
    if ((member === 'agents' || member === 'weights') && value !== null) {
      const inner: Record<string, unknown> = {};
      for (const [key, item] of Object.entries((current?.[member] ?? {}) as Record<string, unknown>)) own(inner, key, item);
      const changesOf = requireObjectOf(`${field}.${member}`, value, 'name → value (null removes one)');
      for (const [key, item] of patchMembers(changesOf)) {
        if (item === null) delete inner[key];
        else own(inner, key, item);
      }
      merged[member] = inner;
    } else if (value === null) {
      delete merged[member];
    } else {
      merged[member] = value;
    }
  }
  return parsePlaneCeiling(merged, field);
}
