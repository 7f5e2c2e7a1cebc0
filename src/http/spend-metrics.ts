import { Gauge, type Registry } from 'prom-client';

import type { Spend } from '../core/spend.js';
import type { AgentCeilings } from '../core/quota.js';
import type { Usage } from '../plane/plane.js';

/** The `unit` label of the spend gauges: the two units quotaplane bounds, as `quotaplane_overruns_total` names them. */
export const SPEND_UNITS = ['tokens', 'minor_units'] as const;

/** One of {@link SPEND_UNITS}. */
export type SpendUnit = (typeof SPEND_UNITS)[number];

const amountOf = (spend: Spend, unit: SpendUnit): number => (unit === 'tokens' ? spend.tokens : spend.minorUnits);

// The per-period ceiling of `unit` in a tenant's quota or an agent's ceilings; undefined when unlimited.
const ceilingOf = (ceilings: AgentCeilings | null | undefined, unit: SpendUnit): number | undefined =>
  unit === 'tokens' ? ceilings?.maxTokensPerPeriod : ceilings?.maxMinorUnitsPerPeriod;

/**
 * How far `usage` has gone into its tightest spend ceiling: the largest (settled + held) / ceiling
 * over the units with a ceiling above 0, or -1 when it has none (a ceiling of 0 allows nothing and
 * is never "near").
 */
export function spendFraction(usage: Usage): number {
  let fraction = -1;
  for (const unit of SPEND_UNITS) {
    const ceiling = ceilingOf(usage.quota, unit);
    if (ceiling === undefined || ceiling <= 0) continue;
    fraction = Math.max(fraction, (amountOf(usage.spent, unit) + amountOf(usage.reserved, unit)) / ceiling);
  }
  return fraction;
}

/**
 * The tenants the spend gauges show, at most `limit` of them: those furthest into a spend ceiling
 * first ({@link spendFraction}), then those without one by settled + held tokens, then minor units,
 * then name (so the choice is stable between scrapes). A tenant near its budget is shown even when
 * it holds no slot, which the slot-ranked gauges would not promise.
 */
export function tenantsNearestCeiling(figures: readonly Usage[], limit: number): readonly Usage[] {
  const keyed = figures.map((usage) => ({
    usage,
    fraction: spendFraction(usage),
    tokens: usage.spent.tokens + usage.reserved.tokens,
    minorUnits: usage.spent.minorUnits + usage.reserved.minorUnits,
  }));
  keyed.sort(
    (a, b) =>
      b.fraction - a.fraction ||
      b.tokens - a.tokens ||
      b.minorUnits - a.minorUnits ||
      (a.usage.tenant < b.usage.tenant ? -1 : a.usage.tenant > b.usage.tenant ? 1 : 0),
  );
  return keyed.slice(0, Math.max(0, limit)).map((entry) => entry.usage);
}

/**
 * The per-tenant spend gauges of `/metrics`, read at scrape time from the figures `plane.usage`
 * answers for every tenant (`tenantFigures`, shared with the other per-tenant gauges, so a scrape
 * reads the store once; no decision pays for them). For the tenant's current period:
 * - `quotaplane_tenant_spend_settled{tenant, unit}`: settled spend;
 * - `quotaplane_tenant_spend_held{tenant, unit}`: spend held by open runs (reserved);
 * - `quotaplane_tenant_spend_ceiling{tenant, unit}`: the quota's per-period ceiling; no series when
 *   the unit is unlimited;
 * - `quotaplane_tenant_agent_spend_settled|held|ceiling{tenant, agent, unit}`: the same per agent
 *   the tenant's quota sets ceilings for (usage.ts `agents`), for the tenants shown.
 * `unit` is `tokens` or `minor_units`. Bounded: only the `limit` tenants nearest a ceiling are shown
 * ({@link tenantsNearestCeiling}; the same number as the other per-tenant series,
 * `DEFAULT_METRICS_TENANTS` by default). There is no `tenant="other"` series: a sum of other
 * tenants' spend against no one ceiling would mean nothing.
 */
export function createSpendMetrics(registry: Registry, prefix: string, tenantFigures: () => Promise<readonly Usage[]>, limit: number): void {
  let inFlight: Promise<readonly Usage[]> | null = null;
  const shown = (): Promise<readonly Usage[]> => {
    inFlight ??= tenantFigures()
      .then((figures) => tenantsNearestCeiling(figures, limit))
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };
  const which = `the ${limit} tenants nearest a spend ceiling (then most spend) are shown`;
  const tenantGauge = (name: string, help: string, fill: (gauge: Gauge<'tenant' | 'unit'>, usage: Usage, unit: SpendUnit) => void) =>
    new Gauge({
      name: `${prefix}${name}`,
      help,
      labelNames: ['tenant', 'unit'] as const,
      registers: [registry],
      async collect() {
        const figures = await shown();
        this.reset();
        for (const usage of figures) for (const unit of SPEND_UNITS) fill(this, usage, unit);
      },
    });
  tenantGauge('tenant_spend_settled', `Settled spend of the tenant in its current period, by unit (tokens, minor_units), read on scrape; ${which}.`, (gauge, usage, unit) =>
    gauge.set({ tenant: usage.tenant, unit }, amountOf(usage.spent, unit)),
  );
  tenantGauge('tenant_spend_held', `Spend held by the tenant's open runs in its current period, by unit, read on scrape; ${which}.`, (gauge, usage, unit) =>
    gauge.set({ tenant: usage.tenant, unit }, amountOf(usage.reserved, unit)),
  );
  tenantGauge('tenant_spend_ceiling', `The tenant's spend ceiling per period, by unit; no series when the unit is unlimited; ${which}.`, (gauge, usage, unit) => {
    const ceiling = ceilingOf(usage.quota, unit);
    if (ceiling !== undefined) gauge.set({ tenant: usage.tenant, unit }, ceiling);
  });

  const agentGauge = (name: string, help: string, value: (agent: NonNullable<Usage['agents']>[number], unit: SpendUnit) => number | undefined) =>
    new Gauge({
      name: `${prefix}${name}`,
      help,
      labelNames: ['tenant', 'agent', 'unit'] as const,
      registers: [registry],
      async collect() {
        const figures = await shown();
        this.reset();
        for (const usage of figures) {
          for (const agent of usage.agents ?? []) {
            for (const unit of SPEND_UNITS) {
              const amount = value(agent, unit);
              if (amount !== undefined) this.set({ tenant: usage.tenant, agent: agent.agent, unit }, amount);
            }
          }
        }
      },
    });
  const agents = "per agent the tenant's quota sets ceilings for, of the tenants the tenant spend gauges show";
  agentGauge('tenant_agent_spend_settled', `Settled spend of an agent in its tenant's current period, by unit, read on scrape; ${agents}.`, (agent, unit) => amountOf(agent.spent, unit));
  agentGauge('tenant_agent_spend_held', `Spend held by an agent's open runs in its tenant's current period, by unit, read on scrape; ${agents}.`, (agent, unit) => amountOf(agent.reserved, unit));
  agentGauge('tenant_agent_spend_ceiling', `An agent's spend ceiling per period inside its tenant, by unit; no series when unlimited; ${agents}.`, (agent, unit) => ceilingOf(agent.ceilings, unit));
}
