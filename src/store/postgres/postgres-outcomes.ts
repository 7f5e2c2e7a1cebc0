import { holdFor, type Budget } from '../../core/budget.js';
import { QuotaError } from '../../core/errors.js';
import { coveringHalt, haltScopeKey, type HaltTarget } from '../../core/halt-scope.js';
import type { Period } from '../../core/period.js';
import { unboundedRefusal } from '../../core/admission-ceilings.js';
import { holdQuotaFor, type AgentCeilings, type TenantQuota } from '../../core/quota.js';
import { checkRate } from '../../core/rate-check.js';
import { describeRateCeiling, isCountableWindow, type RateCeiling } from '../../core/rate.js';
import type { HaltedRefusal, RateLimitedRefusal, SpentOutRefusal, TooManyRunsRefusal, UncountableRateRefusal, UnboundedRefusal } from '../../core/refusal.js';
import { admissionConcurrencyRefusal, admissionSpendRefusal } from '../../core/admission-ceilings.js';
import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import type { Spend } from '../../core/spend.js';
import { decodeHaltRow, type HaltRow } from '../halt-rows.js';
import { corrupt, decodeSpend } from '../rows.js';

/*
 * The decision functions in the database decide; the refusal *values* are built here, from the
 * figures each decision was made on, by the same pure functions of `core/` the SQLite adapter
 * calls. If core and the server ever disagree about a refusal, that is a bug in the mirror, and it
 * surfaces as `INTERNAL` instead of a wrong answer.
 */

/** `INTERNAL`: the server-side decision and the pure decision of `core/` disagree. */
export function decisionMismatch(operation: string, detail: string): QuotaError {
  return new QuotaError(
    'INTERNAL',
    `the PostgreSQL ${operation} decision disagrees with quotaplane's own rule (${detail}); nothing more was ` +
      `written, but report this as a bug`,
    { details: { backend: 'postgres', operation } },
  );
}

/**
 * The figures a spend or concurrency refusal was decided on, as the admission and reserve functions
 * return them: the tenant's, and the agent's and the plane's with the plane-wide
 * ceilings the function read (`null` where not counted).
 */
export interface ReserveFigures {
  readonly running: number | null;
  readonly settled_tokens: number | null;
  readonly settled_minor_units: number | null;
  readonly reserved_tokens: number | null;
  readonly reserved_minor_units: number | null;
  readonly agent_running?: number | null;
  readonly plane_running?: number | null;
  readonly plane_agent_running?: number | null;
  readonly plane_max_runs?: number | null;
  readonly plane_agent_max_runs?: number | null;
  readonly agent_settled_tokens?: number | null;
  readonly agent_settled_minor_units?: number | null;
  readonly agent_reserved_tokens?: number | null;
  readonly agent_reserved_minor_units?: number | null;
}

// The plane-wide ceilings the reserve function read, as a PlaneCeiling holding just those.
function planeOf(agent: string | null, figures: ReserveFigures): PlaneCeiling {
  const plane: { -readonly [K in keyof PlaneCeiling]: PlaneCeiling[K] } = {};
  if (figures.plane_max_runs !== null && figures.plane_max_runs !== undefined) plane.maxConcurrentRuns = Number(figures.plane_max_runs);
  if (agent !== null && figures.plane_agent_max_runs !== null && figures.plane_agent_max_runs !== undefined) {
    plane.agents = { [agent]: { maxConcurrentRuns: Number(figures.plane_agent_max_runs) } };
  }
  return plane;
}

const countOf = (value: number | null | undefined): number => (value === null || value === undefined ? 0 : Number(value));

/**
 * The `TooManyRuns` value for a run without a slot, rebuilt with `admissionConcurrencyRefusal`
 * from every figure the function counted, so the bound it names comes from core.
 */
export function tooManyRuns(tenant: string, quota: TenantQuota, figures: ReserveFigures, agent: string | null = null): TooManyRunsRefusal {
  const refusal = admissionConcurrencyRefusal(
    tenant,
    { quota, plane: planeOf(agent, figures), agent },
    {
      slotHeld: false,
      running: Number(figures.running ?? Number.NaN),
      agentRunning: countOf(figures.agent_running),
      planeRunning: countOf(figures.plane_running),
      planeAgentRunning: countOf(figures.plane_agent_running),
    },
  );
  if (refusal === null) throw decisionMismatch('reserve', `refused for ${figures.running} running runs`);
  return refusal;
}

/** The `SpentOut` value, rebuilt with `admissionSpendRefusal` from the one-snapshot figures (the agent's, then the tenant's). */
export function spentOut(
  tenant: string,
  quota: TenantQuota,
  period: string,
  requested: Spend,
  figures: ReserveFigures,
  agent: string | null = null,
): SpentOutRefusal {
  const agentCounted = figures.agent_settled_tokens !== null && figures.agent_settled_tokens !== undefined;
  const refusal = admissionSpendRefusal({
    tenant,
    period,
    quota,
    agent,
    tenantFigures: {
      settled: decodeSpend(tenant, 'settled spend', figures.settled_tokens, figures.settled_minor_units),
      reserved: decodeSpend(tenant, 'reserved spend', figures.reserved_tokens, figures.reserved_minor_units),
    },
    agentFigures: agentCounted
      ? {
          settled: decodeSpend(tenant, 'settled spend', figures.agent_settled_tokens, figures.agent_settled_minor_units),
          reserved: decodeSpend(tenant, 'reserved spend', figures.agent_reserved_tokens, figures.agent_reserved_minor_units),
        }
      : null,
    requested,
  });
  if (refusal === null) throw decisionMismatch('reserve', `spend refused in ${period} though it fits`);
  return refusal;
}

/** The `Unbounded` value, rebuilt with `holdFor` over the units the tenant or the run's agent bounds. */
export function unbounded(tenant: string, quota: TenantQuota, budget: Budget, width: number, agent: string | null = null): UnboundedRefusal {
  const held = holdFor(holdQuotaFor(quota, agent), budget, width);
  if (held.ok) throw decisionMismatch('admission', 'refused as unbounded though the budget bounds every unit');
  return unboundedRefusal(tenant, quota, agent, held.unit, held.field);
}

/** A halt row as the admission function returns it in JSON (the instant as text, to keep every digit). */
interface HaltJson {
  readonly scope: string;
  readonly reason: string;
  readonly by_actor: string;
  readonly by_basis: string;
  readonly at_ms: string;
}

/**
 * The `Halted` value: every halt row decoded (an unreadable one throws `STORE_CORRUPT`, never
 * skipped), the narrowest covering one named with `coveringHalt`.
 */
export function halted(tenant: string, rows: unknown, target: HaltTarget): HaltedRefusal {
  if (!Array.isArray(rows)) throw corrupt(tenant, 'halt rows the admission could not list');
  const halts = (rows as HaltJson[]).map((row) => decodeHaltRow(tenant, row satisfies HaltRow));
  const halt = coveringHalt(halts, target);
  if (halt === null) throw decisionMismatch('admission', 'refused as halted though no halt covers the run');
  return { code: 'Halted', tenant, scope: haltScopeKey(halt.scope), reason: halt.reason, by: halt.by, haltedAtMs: halt.atMs };
}

/**
 * The scope keys that would cover a run (`haltCovers` turned into a key set): the tenant, the
 * agent's name, the agent's digest, and every principal on the chain.
 */
export function coveringScopeKeys(target: HaltTarget): string[] {
  const keys = ['tenant'];
  if (target.agent !== undefined) keys.push(`agent:${target.agent.name}`, `revision:${target.agent.digest}`);
  for (const principal of target.chain ?? []) keys.push(`subject:${principal}`);
  return keys;
}

/** What a rate decision reports with a refusal (see `quota_reserve_rate` in `migrations/`). */
export interface RateFigures {
  /** 1-based position of the first uncountable or full ceiling in the judged list. */
  readonly ceiling_index?: number | null;
  /** The full ceiling's true count. */
  readonly reached?: number | null;
  /** When a retry fits every ceiling. */
  readonly retry_at_ms?: number | null;
}

/**
 * The rate refusal from the figures the server judged on. An uncountable window is found again
 * with `checkRate` (it decides before anything is counted); a full ceiling's `RateLimited` value
 * carries the server's true count and retry instant, checked to be readable and consistent with
 * the list it judged (the ceiling exists; the count reached it, unless its count is 0; the retry
 * is not before `atMs`).
 */
export function rateRefusal(
  tenant: string,
  grant: string,
  ceilings: readonly RateCeiling[],
  figures: RateFigures,
  atMs: number,
): RateLimitedRefusal | UncountableRateRefusal {
  const ceiling = ceilings[Number(figures.ceiling_index) - 1];
  if (ceiling === undefined) throw decisionMismatch('rate', `${grant} refused naming ceiling ${String(figures.ceiling_index)} of ${ceilings.length}`);
  if (!isCountableWindow(ceiling)) {
    const refusal = checkRate({ tenant, grant, ceilings, instantsMs: [], atMs });
    if (refusal?.code !== 'UncountableRate' || refusal.ceiling !== ceiling) throw decisionMismatch('rate', `${grant} refused as uncountable out of list order`);
    return refusal;
  }
  const reached = figures.reached;
  const retryAtMs = figures.retry_at_ms;
  if (!Number.isSafeInteger(reached) || !Number.isSafeInteger(retryAtMs)) throw corrupt(tenant, `unreadable dispatch figures of ${grant}`);
  if ((reached as number) < ceiling.count || (retryAtMs as number) < atMs) {
    throw decisionMismatch('rate', `${grant} refused with ${String(reached)} counted under ${describeRateCeiling(ceiling)}, retry at ${String(retryAtMs)}`);
  }
  return { code: 'RateLimited', tenant, grant, ceiling, reached: reached as number, retryAtMs: retryAtMs as number };
}

/**
 * A quota holding just the ceilings and period a server-side decision reported it used, with the
 * ceilings of the run's agent (`agent`) when it reported any.
 */
export function quotaOf(
  period: Period,
  maxRuns: number | null,
  limitTokens: number | null,
  limitMinorUnits: number | null,
  agent: { name: string; maxRuns: number | null; limitTokens: number | null; limitMinorUnits: number | null } | null = null,
): TenantQuota {
  const quota: { -readonly [K in keyof TenantQuota]: TenantQuota[K] } = { period };
  if (maxRuns !== null) quota.maxConcurrentRuns = Number(maxRuns);
  if (limitTokens !== null) quota.maxTokensPerPeriod = Number(limitTokens);
  if (limitMinorUnits !== null) quota.maxMinorUnitsPerPeriod = Number(limitMinorUnits);
  if (agent !== null) {
    const ceilings: { -readonly [K in keyof AgentCeilings]: AgentCeilings[K] } = {};
    if (agent.maxRuns !== null) ceilings.maxConcurrentRuns = Number(agent.maxRuns);
    if (agent.limitTokens !== null) ceilings.maxTokensPerPeriod = Number(agent.limitTokens);
    if (agent.limitMinorUnits !== null) ceilings.maxMinorUnitsPerPeriod = Number(agent.limitMinorUnits);
    if (Object.keys(ceilings).length > 0) quota.agents = { [agent.name]: ceilings };
  }
  return quota;
}
