import { Counter, type Registry } from 'prom-client';

/**
 * The `tenant` label a counter may use for each tenant, bounded to `limit` tenants by name: the
 * first `limit` distinct tenants this instance counts keep their name for the life of the process,
 * every later one is counted as `otherLabel` (as is a tenant literally named so). A counter's
 * series must not move between labels once counted (its sum would go down), so the choice is
 * sticky rather than re-ranked at each scrape; a restart chooses again.
 */
export class TenantLabels {
  private readonly named = new Set<string>();

  constructor(
    readonly limit: number,
    readonly otherLabel: string,
  ) {}

  /** The label to count `tenant` under. */
  of(tenant: string): string {
    if (this.named.has(tenant)) return tenant;
    if (tenant === this.otherLabel || this.named.size >= this.limit) return this.otherLabel;
    this.named.add(tenant);
    return tenant;
  }
}

/** What the metered plane counts per tenant (see {@link createTenantCounters}). */
export interface TenantCounters {
  /** Counts one answered admission of `tenant`: `refusalCode` is the refusal's code, `undefined` when admitted. */
  admission(tenant: string, refusalCode: string | undefined): void;
  /** Counts one refused dispatch of `tenant`, by its refusal code. */
  refusedDispatch(tenant: string, code: string): void;
}

/**
 * The per-tenant counters of `/metrics`, beside the tenant-free `quotaplane_admissions_total{outcome}`
 * and `quotaplane_refusals_total{operation, code}`, which keep their labels (docs/compatibility.md):
 * - `quotaplane_tenant_admissions_total{tenant, outcome}`: admissions answered, `admitted` or `refused`;
 * - `quotaplane_tenant_refusals_total{tenant, operation, code}`: refusals by verb (`admit`,
 *   `dispatch`) and refusal code.
 * Counted in memory where the instance answers, no store read. The `tenant` label is bounded by
 * {@link TenantLabels}: the first `limit` tenants this instance counted, the rest `otherLabel`.
 */
export function createTenantCounters(registry: Registry, prefix: string, limit: number, otherLabel: string): TenantCounters {
  const labels = new TenantLabels(limit, otherLabel);
  const which = `the first ${limit} tenants this instance counted keep their name, every later one is counted as tenant="${otherLabel}"`;
  const admissions = new Counter({
    name: `${prefix}tenant_admissions_total`,
    help: `Admissions answered per tenant, by outcome (admitted or refused); ${which}.`,
    labelNames: ['tenant', 'outcome'] as const,
    registers: [registry],
  });
  const refusals = new Counter({
    name: `${prefix}tenant_refusals_total`,
    help: `Refusals answered per tenant, by plane operation (admit, dispatch) and refusal code; ${which}.`,
    labelNames: ['tenant', 'operation', 'code'] as const,
    registers: [registry],
  });
  return {
    admission(tenant, refusalCode) {
      const label = labels.of(tenant);
      admissions.inc({ tenant: label, outcome: refusalCode === undefined ? 'admitted' : 'refused' });
      if (refusalCode !== undefined) refusals.inc({ tenant: label, operation: 'admit', code: refusalCode });
    },
    refusedDispatch(tenant, code) {
      refusals.inc({ tenant: labels.of(tenant), operation: 'dispatch', code });
    },
  };
}
