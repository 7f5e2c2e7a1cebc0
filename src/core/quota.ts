import { describe, requireAmount } from './amounts.js';
import { invalidArgument } from './errors.js';
import { PERIODS, type Period } from './period.js';
import { MAX_RATE_WINDOW_SECONDS, type RateCeiling } from './rate.js';
import { requireIdentifier } from './identifiers.js';
import { parseAlertThresholds, type AlertThreshold } from './alert-thresholds.js';

/**
 * A tenant's ceilings (docs/concepts/glossary.md, "quota"). Every ceiling is optional: absent
 * means unlimited, `0` means nothing is allowed (docs/design/decisions.md "Absent means
 * unlimited, 0 means nothing").
 * - `maxConcurrentRuns`: slots, i.e. runs admitted and not yet settled with their slot released.
 * - `maxTokensPerPeriod`, `maxMinorUnitsPerPeriod`: settled plus reserved spend per billing period.
 * - `period`: `monthly` (default) or `daily`, in UTC.
 * - `rateCeilings`: per grant (`tool://server/name`), ceilings every dispatch of that grant must
 *   fit besides any the caller declares (docs/design/rules.md#l24).
 * - `agents`: per agent name, ceilings for the runs of that agent inside this tenant, on top of the
 *   tenant's own (see {@link AgentCeilings}; docs/design/rules.md#k7, #k8). A run without an agent
 *   identity is covered by none of them.
 * - `alertThresholds`: where on the tenant's spend ceilings an alert fires (see
 *   {@link AlertThreshold}; absent: the plane-wide default, else 80 % and 100 %; `[]`: none;
 *   docs/design/rules.md#e2).
 */
export interface TenantQuota {
  readonly maxConcurrentRuns?: number;
  readonly maxTokensPerPeriod?: number;
  readonly maxMinorUnitsPerPeriod?: number;
  readonly period: Period;
  readonly rateCeilings?: Readonly<Record<string, readonly RateCeiling[]>>;
  readonly agents?: Readonly<Record<string, AgentCeilings>>;
  readonly alertThresholds?: readonly AlertThreshold[];
}

/**
 * A quota as `setQuota` takes it: a {@link TenantQuota} whose `period` may be left out (`monthly`).
 * What `setQuota` answers and `getQuota` reads always names the period.
 */
export type TenantQuotaInput = Omit<TenantQuota, 'period'> & { readonly period?: Period };

/**
 * The ceilings of one agent name inside a tenant (docs/design/rules.md#k7–#k9), counted over the
 * tenant's runs admitted with that agent name (any revision). Each is optional: absent is
 * unlimited, `0` allows nothing (docs/design/decisions.md "Absent means unlimited, 0 means
 * nothing"). An admission needs room under these *and* under the tenant's.
 * - `maxConcurrentRuns`: slots held by the agent's runs.
 * - `maxTokensPerPeriod`, `maxMinorUnitsPerPeriod`: the agent's settled plus reserved spend in the
 *   tenant's billing period (the tenant's `period` kind).
 * - `alertThresholds`: where on the agent's spend ceilings an alert fires (absent: the tenant's
 *   thresholds; docs/design/rules.md#e2).
 */
export interface AgentCeilings {
  readonly maxConcurrentRuns?: number;
  readonly maxTokensPerPeriod?: number;
  readonly maxMinorUnitsPerPeriod?: number;
  readonly alertThresholds?: readonly AlertThreshold[];
}

/**
 * The rate ceilings `quota` configures for `grant` (empty when none, or no quota). An own member
 * only: a grant named like an object's built-in member (`constructor`, `toString`) has none unless
 * configured.
 */
export function configuredRateCeilings(quota: TenantQuota | null | undefined, grant: string): readonly RateCeiling[] {
  const ceilings = quota?.rateCeilings;
  if (ceilings === undefined || !Object.hasOwn(ceilings, grant)) return [];
  return ceilings[grant] ?? [];
}

/** The ceilings of `agent` in `quota`, or `null` when the run has no agent or the agent has none. */
export function agentCeilingsOf(quota: TenantQuota, agent: string | null | undefined): AgentCeilings | null {
  if (agent === null || agent === undefined || quota.agents === undefined) return null;
  return Object.hasOwn(quota.agents, agent) ? (quota.agents[agent] ?? null) : null;
}

/**
 * The quota whose spend bounds the hold formula uses for a run of `agent`: a unit is bounded when
 * the tenant or the agent bounds it, so a run of an agent with a spend ceiling holds its worst case
 * (and is `Unbounded` without a budget for it) even when the tenant bounds no spend. The tenant's
 * own ceilings are kept; an agent-only bound is marked with the agent's value.
 */
export function holdQuotaFor(quota: TenantQuota, agent: string | null | undefined): TenantQuota {
  const ceilings = agentCeilingsOf(quota, agent);
  if (ceilings === null) return quota;
  const tokens = quota.maxTokensPerPeriod ?? ceilings.maxTokensPerPeriod;
  const minorUnits = quota.maxMinorUnitsPerPeriod ?? ceilings.maxMinorUnitsPerPeriod;
  const merged: { -readonly [K in keyof TenantQuota]: TenantQuota[K] } = { ...quota };
  if (tokens !== undefined) merged.maxTokensPerPeriod = tokens;
  if (minorUnits !== undefined) merged.maxMinorUnitsPerPeriod = minorUnits;
  return merged;
}

/** The quota of a tenant nobody configured: no ceilings, monthly periods. */
export const UNLIMITED_QUOTA: TenantQuota = Object.freeze({ period: 'monthly' });

/**
 * True when no ceiling is set. Unlimited is still accounted: each run still takes a slot
 * (docs/design/rules.md#p1).
 */
export function isUnlimited(quota: TenantQuota): boolean {
  return (
    quota.maxConcurrentRuns === undefined &&
    quota.maxTokensPerPeriod === undefined &&
    quota.maxMinorUnitsPerPeriod === undefined
  );
}

/**
 * True when the quota bounds spend in either unit (tokens or minor units per period); if not, no
 * hold is taken (docs/design/rules.md#l7).
 */
export function boundsSpend(quota: TenantQuota): boolean {
  return quota.maxTokensPerPeriod !== undefined || quota.maxMinorUnitsPerPeriod !== undefined;
}

const QUOTA_FIELDS = new Set(['maxConcurrentRuns', 'maxTokensPerPeriod', 'maxMinorUnitsPerPeriod', 'period', 'rateCeilings', 'agents', 'alertThresholds']);
const AGENT_FIELDS = new Set(['maxConcurrentRuns', 'maxTokensPerPeriod', 'maxMinorUnitsPerPeriod', 'alertThresholds']);

/**
 * Validates an untrusted quota being set and returns a normalised copy (absent `period` →
 * `monthly`; `null` ceilings → absent). Throws `INVALID_ARGUMENT` naming the field: unknown
 * fields, a ceiling that is not a non-negative safe integer, an unknown period, or a rate ceiling
 * whose window is outside 1 … 2 678 400 s or whose count is 0 — such a ceiling would answer every
 * dispatch of its grant with a refusal, so it is refused when set rather than at each dispatch
 * (docs/design/rules.md#c39). Quotas already stored are read with {@link parseStoredQuota}.
 */
export function parseQuota(value: unknown, field = 'quota'): TenantQuota {
  return parseQuotaWith(value, field, true);
}

/**
 * Like {@link parseQuota}, but keeps rate ceilings it would refuse to set (a window outside
 * 1 … 2 678 400 s, a count of 0): a quota stored before those were refused must still read, and
 * dispatch answers such a ceiling with `UncountableRate` or `RateLimited`
 * (docs/design/rules.md#d7).
 */
export function parseStoredQuota(value: unknown, field = 'quota'): TenantQuota {
  return parseQuotaWith(value, field, false);
}

function parseQuotaWith(value: unknown, field: string, settable: boolean): TenantQuota {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!QUOTA_FIELDS.has(key)) {
      throw invalidArgument(`${field}.${key}`, `is not a quota field; use ${[...QUOTA_FIELDS].join(', ')}`);
    }
  }
  const period = record.period ?? 'monthly';
  if (!PERIODS.includes(period as Period)) {
    throw invalidArgument(`${field}.period`, `must be one of ${PERIODS.join(', ')}, got ${describe(period)}`);
  }
  const ceiling = (name: string): number | undefined =>
    record[name] === undefined || record[name] === null ? undefined : requireAmount(`${field}.${name}`, record[name]);
  const quota: { -readonly [K in keyof TenantQuota]: TenantQuota[K] } = { period: period as Period };
  const runs = ceiling('maxConcurrentRuns');
  const tokens = ceiling('maxTokensPerPeriod');
  const minorUnits = ceiling('maxMinorUnitsPerPeriod');
  if (runs !== undefined) quota.maxConcurrentRuns = runs;
  if (tokens !== undefined) quota.maxTokensPerPeriod = tokens;
  if (minorUnits !== undefined) quota.maxMinorUnitsPerPeriod = minorUnits;
  if (record.rateCeilings !== undefined && record.rateCeilings !== null) {
    quota.rateCeilings = parseGrantCeilings(record.rateCeilings, `${field}.rateCeilings`, settable);
  }
  if (record.agents !== undefined && record.agents !== null) {
    const agents = parseAgentCeilings(record.agents, `${field}.agents`);
    if (Object.keys(agents).length > 0) quota.agents = agents;
  }
  if (record.alertThresholds !== undefined && record.alertThresholds !== null) {
    quota.alertThresholds = parseAlertThresholds(record.alertThresholds, `${field}.alertThresholds`);
  }
  return quota;
}

/**
 * Validates an untrusted map of agent name → {@link AgentCeilings}. Throws `INVALID_ARGUMENT`
 * naming the field: a map that is not an object, an agent name that is not an identifier, an
 * unknown member, or a ceiling that is not a non-negative safe integer. `null` ceilings are absent.
 */
export function parseAgentCeilings(value: unknown, field = 'agents'): Record<string, AgentCeilings> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object of agent name → { maxConcurrentRuns, maxTokensPerPeriod, maxMinorUnitsPerPeriod }, got ${describe(value)}`);
  }
  const result: Record<string, AgentCeilings> = {};
  for (const [agent, ceilings] of Object.entries(value)) {
    requireIdentifier(`${field} key`, agent);
    const agentField = `${field}[${JSON.stringify(agent)}]`;
    if (typeof ceilings !== 'object' || ceilings === null || Array.isArray(ceilings)) {
      throw invalidArgument(agentField, `must be an object of ceilings, got ${describe(ceilings)}`);
    }
    const record = ceilings as Record<string, unknown>;
    const parsed: { -readonly [K in keyof AgentCeilings]: AgentCeilings[K] } = {};
    for (const [name, ceiling] of Object.entries(record)) {
      if (!AGENT_FIELDS.has(name)) {
        throw invalidArgument(`${agentField}.${name}`, `is not an agent ceiling; use ${[...AGENT_FIELDS].join(', ')}`);
      }
      if (ceiling === undefined || ceiling === null) continue;
      if (name === 'alertThresholds') parsed.alertThresholds = parseAlertThresholds(ceiling, `${agentField}.alertThresholds`);
      else parsed[name as 'maxConcurrentRuns'] = requireAmount(`${agentField}.${name}`, ceiling);
    }
    // defineProperty: an agent named `__proto__` is an own member like any other.
    Object.defineProperty(result, agent, { value: parsed, enumerable: true, writable: true, configurable: true });
  }
  return result;
}

function parseGrantCeilings(value: unknown, field: string, settable: boolean): Record<string, readonly RateCeiling[]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalidArgument(field, `must be an object of grant → ceilings, got ${describe(value)}`);
  }
  const result: Record<string, readonly RateCeiling[]> = {};
  for (const [grant, ceilings] of Object.entries(value)) {
    requireIdentifier(`${field} key`, grant);
    const grantField = `${field}[${JSON.stringify(grant)}]`;
    const parsed = parseRateCeilings(ceilings, grantField);
    if (settable) parsed.forEach((ceiling, index) => requireSettableCeiling(`${grantField}[${index}]`, ceiling));
    result[grant] = parsed;
  }
  return result;
}

// A configured ceiling must be one a store can count and one a dispatch can pass.
function requireSettableCeiling(field: string, ceiling: RateCeiling): void {
  const { count, windowSeconds } = ceiling;
  if (windowSeconds < 1 || windowSeconds > MAX_RATE_WINDOW_SECONDS) {
    throw invalidArgument(
      `${field}.windowSeconds`,
      `must be from 1 to ${MAX_RATE_WINDOW_SECONDS} seconds (31 days), got ${windowSeconds}`,
    );
  }
  if (count < 1) {
    throw invalidArgument(`${field}.count`, `must be at least 1, got 0: a count of 0 would refuse every dispatch of the grant`);
  }
}

/**
 * Validates an untrusted list of rate ceilings `[{ count, windowSeconds }]`. Throws
 * `INVALID_ARGUMENT` naming the element's field. Windows are not range-checked here: an
 * uncountable window is a refusal (`UncountableRate`), not a fault (docs/design/rules.md#d7).
 */
export function parseRateCeilings(value: unknown, field = 'ceilings'): RateCeiling[] {
  if (!Array.isArray(value)) throw invalidArgument(field, `must be an array of { count, windowSeconds }`);
  return value.map((item: unknown, index) => {
    const record = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
    return {
      count: requireAmount(`${field}[${index}].count`, record.count),
      windowSeconds: requireAmount(`${field}[${index}].windowSeconds`, record.windowSeconds),
    };
  });
}
