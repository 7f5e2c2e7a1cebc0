import { agentCeilingsOf, type TenantQuota } from './quota.js';
import { planeAgentLimit, type PlaneCeiling } from './plane-ceiling.js';
import type { BudgetField, SpendUnit } from './budget.js';
import type { SpentOutRefusal, TooManyRunsRefusal, UnboundedRefusal } from './refusal.js';
import { concurrencyRefusal } from './reserve-decision.js';
import { checkSpend } from './spend-check.js';
import type { Spend } from './spend.js';

/**
 * Every ceiling that covers one admission (K1–K14 in docs/design/rules.md): the tenant's quota
 * (with its per-agent ceilings), the plane-wide ceiling (`null`: none), and the run's agent name
 * (`null`: the run has no agent identity, so no per-agent ceiling covers it).
 */
export interface CoveringCeilings {
  readonly quota: TenantQuota;
  readonly plane: PlaneCeiling | null;
  readonly agent: string | null;
}

/**
 * What the admitting transaction counted before deciding, all read in that transaction after
 * every lock the decision needs (slots are members of sets, never estimates):
 * - `slotHeld`: the run already holds a slot (a retried reserve), so it is never counted against any ceiling;
 * - `running`: the tenant's slots;
 * - `agentRunning`: the tenant's slots of runs of this agent (0 without an agent);
 * - `planeRunning`: every tenant's slots (0 when the plane bounds nothing);
 * - `planeAgentRunning`: every tenant's slots of runs of this agent name (0 without an agent or plane ceiling for it).
 */
export interface ConcurrencyFigures {
  readonly slotHeld: boolean;
  readonly running: number;
  readonly agentRunning: number;
  readonly planeRunning: number;
  readonly planeAgentRunning: number;
}

/**
 * The concurrency decision of an admission (docs/design/rules.md#c1, #k3, #k4, #k6, #k7): a run
 * without a slot needs room under every ceiling that covers it; a ceiling with `running ≥ limit`
 * refuses `TooManyRuns` naming it (`bound`), narrowest first: the tenant's ceiling for the agent,
 * the tenant's, the plane-wide one for the agent, the plane-wide one. A run that already holds a
 * slot is never refused. Pure and synchronous; returns `null` when the run may take its slot.
 */
export function admissionConcurrencyRefusal(
  tenant: string,
  ceilings: CoveringCeilings,
  figures: ConcurrencyFigures,
): TooManyRunsRefusal | null {
  if (figures.slotHeld) return null;
  const agent = ceilings.agent;
  const agentLimit = agentCeilingsOf(ceilings.quota, agent)?.maxConcurrentRuns;
  if (agent !== null && agentLimit !== undefined && figures.agentRunning >= agentLimit) {
    return { code: 'TooManyRuns', tenant, running: figures.agentRunning, limit: agentLimit, bound: 'agent', agent };
  }
  const tenantRefusal = concurrencyRefusal(tenant, ceilings.quota, { slotHeld: false, running: figures.running });
  if (tenantRefusal !== null) return tenantRefusal;
  const planeAgent = planeAgentLimit(ceilings.plane, agent);
  if (agent !== null && planeAgent !== undefined && figures.planeAgentRunning >= planeAgent) {
    return { code: 'TooManyRuns', tenant, running: figures.planeAgentRunning, limit: planeAgent, bound: 'plane-agent', agent };
  }
  const planeLimit = ceilings.plane?.maxConcurrentRuns;
  if (planeLimit !== undefined && figures.planeRunning >= planeLimit) {
    return { code: 'TooManyRuns', tenant, running: figures.planeRunning, limit: planeLimit, bound: 'plane' };
  }
  return null;
}

/**
 * A period's settled and reserved figures, read in the transaction that decides
 * (docs/design/rules.md, rule 1 in short).
 */
export interface PeriodFigures {
  readonly settled: Spend;
  readonly reserved: Spend;
}

/** Input of {@link admissionSpendRefusal}. `agentFigures` are the agent's own in `period` (`null` without an agent). */
export interface AdmissionSpendCheck {
  readonly tenant: string;
  readonly period: string;
  readonly quota: TenantQuota;
  readonly agent: string | null;
  readonly tenantFigures: PeriodFigures;
  readonly agentFigures: PeriodFigures | null;
  readonly requested: Spend;
}

/**
 * The spend decision of an admission (docs/design/rules.md#d1, #k8, #k9): the hold must fit the
 * agent's ceilings in the tenant (against the agent's settled and reserved spend), then the
 * tenant's (against the tenant's); each unit refuses when `settled + reserved + requested` is
 * strictly greater than its ceiling. Returns `SpentOut` naming the bound (`agent` first), or `null`.
 */
export function admissionSpendRefusal(input: AdmissionSpendCheck): SpentOutRefusal | null {
  const agentCeilings = agentCeilingsOf(input.quota, input.agent);
  if (input.agent !== null && agentCeilings !== null && input.agentFigures !== null) {
    const agentQuota: TenantQuota = { period: input.quota.period, ...agentCeilings };
    const refused = checkSpend({ ...input, quota: agentQuota, ...input.agentFigures });
    if (refused !== null) return { ...refused, bound: 'agent', agent: input.agent };
  }
  return checkSpend({ ...input, ...input.tenantFigures });
}

/**
 * The `Unbounded` refusal for a budget that leaves `field` open while `unit` is bounded
 * (docs/design/rules.md#d5, #k8): `bound: 'tenant'` when the tenant's own quota bounds the unit,
 * else `'agent'` naming `agent`, whose ceiling in the tenant's quota is then the one that bounds
 * it.
 */
export function unboundedRefusal(tenant: string, quota: TenantQuota, agent: string | null, unit: SpendUnit, field: BudgetField): UnboundedRefusal {
  const tenantBounds = unit === 'tokens' ? quota.maxTokensPerPeriod !== undefined : quota.maxMinorUnitsPerPeriod !== undefined;
  if (tenantBounds || agent === null) return { code: 'Unbounded', tenant, unit, field, bound: 'tenant' };
  return { code: 'Unbounded', tenant, unit, field, bound: 'agent', agent };
}
