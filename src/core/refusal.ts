import type { BudgetField, SpendUnit } from './budget.js';
import { describeHaltScope, parseAnyHaltScope } from './halt-scope.js';
import type { Operator } from './operator.js';
import { describeRateCeiling, MAX_RATE_WINDOW_SECONDS, type RateCeiling } from './rate.js';

/**
 * Which ceiling bound a `TooManyRuns` or `SpentOut` refusal (docs/design/rules.md#k3–#k9): `agent`
 * — the tenant's ceiling for the run's agent name (`quota.agents`); `tenant` — the tenant's own
 * quota; `plane-agent` — the plane-wide ceiling for the agent name across every tenant; `plane` —
 * the plane-wide ceiling across every tenant. When several bind at once the narrowest is named, in
 * that order. Spend is bounded per tenant and per agent only, so `SpentOut` names `agent` or
 * `tenant`.
 */
export type CeilingBound = 'agent' | 'tenant' | 'plane-agent' | 'plane';

/**
 * `running` runs already hold slots under the ceiling named by `bound`, at or past its `limit`
 * (docs/design/rules.md#c2, #k3). For `agent` and `plane-agent`, `agent` names the agent and
 * `running` counts that agent's slots (in the tenant, or across tenants); for `plane`, every
 * tenant's slots. Back-pressure.
 */
export interface TooManyRunsRefusal {
  readonly code: 'TooManyRuns';
  readonly tenant: string;
  readonly running: number;
  readonly limit: number;
  readonly bound: CeilingBound;
  readonly agent?: string;
  /**
   * Only for a waiting admission whose time ran out (docs/design/rules.md#w5): its place in the
   * tenant's queue, 1 = first.
   */
  readonly queuePosition?: number;
  /** Only for a waiting admission whose time ran out (W5): how long it waited, ms. */
  readonly waitedMs?: number;
}

/**
 * Settled + reserved + requested would pass the period's ceiling in `unit`
 * (docs/design/rules.md#c11, #d1). `bound` is `tenant` for the tenant's quota, or `agent` (with
 * `agent` named) for the tenant's ceiling on that agent's spend, whose figures are then the
 * agent's. Back-pressure.
 */
export interface SpentOutRefusal {
  readonly code: 'SpentOut';
  readonly tenant: string;
  readonly period: string;
  readonly unit: SpendUnit;
  readonly settled: number;
  readonly reserved: number;
  readonly requested: number;
  readonly limit: number;
  readonly bound: 'tenant' | 'agent';
  readonly agent?: string;
}

/**
 * The quota bounds `unit` but the run's budget leaves `field` open, so its cost cannot be reserved
 * (docs/design/rules.md#d5, #l5). `bound` says whose ceiling bounds the unit: `tenant` (the
 * tenant's own quota) or `agent` (only the tenant's ceiling for the run's agent, named by `agent`;
 * K8).
 */
export interface UnboundedRefusal {
  readonly code: 'Unbounded';
  readonly tenant: string;
  readonly unit: SpendUnit;
  readonly field: BudgetField;
  readonly bound: 'tenant' | 'agent';
  readonly agent?: string;
}

/**
 * An operator's halt covers the run; `scope` is the narrowest covering scope's key
 * (docs/design/rules.md#l3). Means stop.
 */
export interface HaltedRefusal {
  readonly code: 'Halted';
  readonly tenant: string;
  readonly scope: string;
  readonly reason: string;
  readonly by: Operator;
  readonly haltedAtMs: number;
}

/**
 * `reached` dispatches of `grant` already fall in the window of `ceiling`
 * (docs/design/rules.md#c32). `retryAtMs` is the instant (Unix ms) enough of them will have aged
 * out for one more to fit.
 */
export interface RateLimitedRefusal {
  readonly code: 'RateLimited';
  readonly tenant: string;
  readonly grant: string;
  readonly ceiling: RateCeiling;
  readonly reached: number;
  readonly retryAtMs: number;
}

/**
 * `ceiling`'s window is outside 1 … 2 678 400 seconds, so no store can count it
 * (docs/design/rules.md#c39).
 */
export interface UncountableRateRefusal {
  readonly code: 'UncountableRate';
  readonly grant: string;
  readonly ceiling: RateCeiling;
}

/**
 * A halt that reaches running work covers the run; running work pauses
 * (docs/design/decisions.md "Subject halts reach running work"; docs/design/rules.md#l47, #c44).
 * `scope` is the halt's scope key (`subject:alice`, `agent:triage`, `tenant`…); `subject` is the
 * withdrawn principal, present when the halt is a subject halt (as in every v1 answer before).
 */
export interface WithheldRefusal {
  readonly code: 'Withheld';
  readonly tenant: string;
  readonly subject?: string;
  readonly scope?: string;
  readonly reason: string;
}

/**
 * Every refusal quotaplane returns. Refusals are values and write nothing (docs/design/decisions.md
 * "Refusals are values, faults are exceptions").
 */
export type Refusal =
  | TooManyRunsRefusal
  | SpentOutRefusal
  | UnboundedRefusal
  | HaltedRefusal
  | RateLimitedRefusal
  | UncountableRateRefusal
  | WithheldRefusal;

/**
 * The refusal codes: `TooManyRuns`, `SpentOut`, `Unbounded`, `Halted`, `RateLimited`,
 * `UncountableRate`, `Withheld`.
 */
export type RefusalCode = Refusal['code'];

/** A refused answer: the structured refusal plus its human sentence from {@link refusalMessage}. */
export interface Refused<R extends Refusal = Refusal> {
  readonly ok: false;
  readonly refusal: R;
  readonly message: string;
}

/** Wraps a refusal into a {@link Refused} answer with its message. */
export function refuse<R extends Refusal>(refusal: R): Refused<R> {
  return { ok: false, refusal, message: refusalMessage(refusal) };
}

/**
 * The sentence a person reads for a refusal: the figures the decision was made from and what to do.
 * Back-pressure messages say when to retry; a halt says who stopped what and why.
 */
export function refusalMessage(refusal: Refusal): string {
  switch (refusal.code) {
    case 'TooManyRuns':
      return (
        `${whoseRuns(refusal)}; this is back-pressure, not a fault: retry when one of them finishes` +
        (refusal.waitedMs === undefined
          ? ''
          : ` (waited ${refusal.waitedMs} ms, position ${refusal.queuePosition ?? 1} in the tenant's queue)`)
      );
    case 'SpentOut':
      return (
        `tenant '${refusal.tenant}'${refusal.bound === 'agent' ? ` (agent '${refusal.agent ?? ''}', under its own ceiling)` : ''} ` +
        `cannot reserve ${refusal.requested} ${refusal.unit} in period ${refusal.period}: ` +
        `${refusal.settled} ${refusal.unit} settled and ${refusal.reserved} ${refusal.unit} reserved by running work, ` +
        `against a limit of ${refusal.limit} ${refusal.unit}; settled spend resets when the period ends, reserved ` +
        `spend is released as its runs conclude, and 'quotaplane attention' names holders that have stopped`
      );
    case 'Unbounded':
      return (
        `${refusal.bound === 'agent' ? `tenant '${refusal.tenant}' bounds the ${refusal.unit} per period of agent '${refusal.agent ?? ''}'` : `tenant '${refusal.tenant}' bounds ${refusal.unit} per period`}, but this run declares no ${refusal.field}, ` +
        `so its cost is unbounded and cannot be reserved; set budget.${refusal.field} ` +
        `(a run under a ${refusal.unit} ceiling declares both its total and its per-call bound)`
      );
    case 'Halted': {
      const scope = parseAnyHaltScope(refusal.scope);
      const what = scope === null ? refusal.scope : describeHaltScope(scope);
      return `${what} is halted by an operator (tenant '${refusal.tenant}'): ${refusal.reason}`;
    }
    case 'RateLimited':
      return (
        `${refusal.grant} allows ${describeRateCeiling(refusal.ceiling)} for tenant '${refusal.tenant}', and ` +
        `${refusal.reached} dispatch(es) already fall in the window ending now; this is back-pressure: ` +
        `wait for the window to pass`
      );
    case 'UncountableRate':
      return (
        `${refusal.grant} states a ceiling no store can count (${describeRateCeiling(refusal.ceiling)}): ` +
        `a window is at least 1 second and at most ${MAX_RATE_WINDOW_SECONDS} seconds`
      );
    case 'Withheld':
      return (
        `tenant '${refusal.tenant}': ${withheldWhat(refusal)} by an operator: ` +
        `${refusal.reason}; pause the run (settle without concluding) and resume it after the halt is lifted`
      );
  }
}

// What a Withheld refusal says was stopped: a subject's authority, or the work of a halted scope.
function withheldWhat(refusal: WithheldRefusal): string {
  if (refusal.subject !== undefined) return `authority of '${refusal.subject}' was withdrawn`;
  const scope = refusal.scope === undefined ? null : parseAnyHaltScope(refusal.scope);
  return `running work of ${scope === null ? (refusal.scope ?? 'a halted scope') : describeHaltScope(scope)} was halted`;
}

// Which runs a TooManyRuns refusal counted, under which ceiling.
function whoseRuns(refusal: TooManyRunsRefusal): string {
  const counted = `${refusal.running} run(s) executing`;
  switch (refusal.bound) {
    case 'agent':
      return `agent '${refusal.agent ?? ''}' of tenant '${refusal.tenant}' has ${counted}, and the tenant limits it to ${refusal.limit} concurrent run(s)`;
    case 'plane-agent':
      return `agent '${refusal.agent ?? ''}' has ${counted} across all tenants, and the plane-wide limit for it is ${refusal.limit} concurrent run(s) (tenant '${refusal.tenant}' asked)`;
    case 'plane':
      return `all tenants together have ${counted}, and the plane-wide limit is ${refusal.limit} concurrent run(s) (tenant '${refusal.tenant}' asked)`;
    default:
      return `tenant '${refusal.tenant}' has ${counted}, and its limit is ${refusal.limit} concurrent run(s)`;
  }
}
