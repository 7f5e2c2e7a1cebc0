import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

import type { Plane, Usage } from '../plane/plane.js';
import type { SweepTiming } from '../plane/sweeper.js';
import { createOverrunCounter } from './overrun-metrics.js';
import { createPlaneMetrics } from './plane-metrics.js';
import { createSpendMetrics } from './spend-metrics.js';
import { createSweepMetrics } from './sweep-metrics.js';
import { createWebhookMetrics } from './webhook-metrics.js';
import type { AttemptMetric } from '../plane/webhook-dispatcher.js';
import { createTenantCounters } from './tenant-counters.js';
import { RefusalHistory } from './refusal-history.js';
import { DEFAULT_METRICS_TENANTS } from './http-defaults.js';

/** Prefix of every metric the service exports. */
export const METRIC_PREFIX = 'quotaplane_';

/**
 * The service's Prometheus metrics (`GET /metrics`), in a registry of their own
 * per app, so two apps in one process (tests, an embedder) never mix their counts.
 * - `quotaplane_admissions_total{outcome}`: admissions answered, `admitted` or `refused`;
 * - `quotaplane_refusals_total{operation, code}`: refusals by verb and refusal code;
 * - `quotaplane_tenant_admissions_total{tenant, outcome}` and
 *   `quotaplane_tenant_refusals_total{tenant, operation, code}`: the same per tenant, the first
 *   `tenantSeries` tenants this instance counted by name, the rest as `tenant="other"`
 *   (`tenant-counters.ts`);
 * - `quotaplane_tenant_spend_settled|held|ceiling{tenant, unit}` and
 *   `quotaplane_tenant_agent_spend_settled|held|ceiling{tenant, agent, unit}`: spend in the
 *   tenant's current period against its ceilings, read on scrape for the `tenantSeries` tenants
 *   nearest a spend ceiling (`spend-metrics.ts`);
 * - `quotaplane_settles_total{outcome}`: `settled`, `already-settled`, or the fault code;
 * - `quotaplane_dispatches_total{outcome}`: `counted`, the refusal code, or the fault code;
 * - `quotaplane_overruns_total{unit}`: passes settled over their hold (`overrun-metrics.ts`);
 * - `quotaplane_plane_call_duration_seconds{operation}`: latency of each plane call (store included);
 * - `quotaplane_http_request_duration_seconds{method, route, status_code}`: latency of each request;
 * - `quotaplane_tenant_running_runs{tenant}`, `quotaplane_tenant_reserved_tokens{tenant}`,
 *   `quotaplane_tenant_reserved_minor_units{tenant}`: read from the store on each scrape, for the
 *   tenant's current period. Bounded: only the busiest `tenantSeries` tenants
 *   (most running runs, then most reserved tokens, then minor units, then name) get their own
 *   series; every other tenant is summed into one `tenant="other"` series (a tenant literally
 *   named `other` is always summed there), so a flood of tenant names cannot grow `/metrics`;
 * - `quotaplane_tenant_waiting_admissions{tenant}` and `quotaplane_tenant_oldest_wait_seconds{tenant}`:
 *   the tenant's queue of waiting admissions, read likewise (`other` sums the queues and
 *   shows the longest wait);
 * - `quotaplane_tenant_agent_running_runs{tenant, agent}`: per agent the tenant's quota sets ceilings
 *   for, its slots (tenants with their own series only);
 * - the plane-wide gauges and `quotaplane_ceiling_refusals_total{code, bound}` (`plane-metrics.ts`);
 * - `quotaplane_sweep_lag_seconds` and `quotaplane_sweep_duration_seconds`: per sweep of the
 *   process's sweeper, the bound on how late it freed a lapsed slot and how long it took, and
 *   `quotaplane_sweep_behind_seconds`, the bound on the age of a lapsed lease not yet swept
 *   (`sweep-metrics.ts`; fed by {@link ServiceMetrics.observeSweep});
 * - `quotaplane_webhook_deliveries_total{outcome}` and `quotaplane_webhook_oldest_undelivered_seconds`
 *   (`webhook-metrics.ts`; fed by {@link ServiceMetrics.observeWebhookAttempt});
 * - not on `/metrics` but from the same metering: refused admissions per tenant per minute over
 *   the last hour, this instance's count (`refusalHistory`, served by `GET /v1/plane/refusals`);
 * - `quotaplane_tenants{series}`: how many tenants are shown on their own (`own`) and summed
 *   into `other`;
 * - Node's process metrics (`quotaplane_process_…`, `quotaplane_nodejs_…`).
 */
export interface ServiceMetrics {
  readonly registry: Registry;
  /** Records one finished request. `route` is the route pattern (`/v1/runs/:run/settle`), never the raw URL. */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void;
  /** Wraps `plane` so its calls are counted and timed; methods it does not know pass through unchanged. */
  meter(plane: Plane): Plane;
  /** Records one sweep of the process's sweeper (`startSweeper`'s `onSweep` timing). */
  observeSweep(timing: SweepTiming): void;
  /** Counts one recorded webhook attempt (the dispatcher's `onAttempt`; docs/design/rules.md#h3). */
  observeWebhookAttempt(outcome: AttemptMetric): void;
  /** Refused admissions per tenant per minute over the last hour, as this instance answered them (`refusal-history.ts`). */
  readonly refusalHistory: RefusalHistory;
}

export { DEFAULT_METRICS_TENANTS };

/** The `tenant` label of the series every tenant beyond the busiest ones is summed into. */
export const OTHER_TENANTS_LABEL = 'other';

/**
 * Builds the metrics of one app; the per-tenant gauges read `plane.usage` for every tenant of
 * `plane.tenants()` on each scrape and keep their own series for the busiest `tenantSeries`
 * (default {@link DEFAULT_METRICS_TENANTS}; 0 sums every tenant into `other`).
 */
export function createServiceMetrics(options: {
  plane: Plane;
  tenantSeries?: number;
  nowMs?: () => number;
  /** When the oldest pending webhook delivery was made (the store's `webhooks().oldestPendingAtMs`); without it no such gauge. */
  webhookOldestPendingAtMs?: (() => Promise<number | null>) | undefined;
}): ServiceMetrics {
  const tenantSeries = options.tenantSeries ?? DEFAULT_METRICS_TENANTS;
  const nowMs = options.nowMs ?? Date.now;
  // Bounded like the per-tenant series: the same number of tenants by name, the rest as one count.
  const refusalHistory = new RefusalHistory(tenantSeries, nowMs());
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: METRIC_PREFIX });

  const admissions = new Counter({
    name: `${METRIC_PREFIX}admissions_total`,
    help: 'Admissions answered, by outcome (admitted or refused).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const refusals = new Counter({
    name: `${METRIC_PREFIX}refusals_total`,
    help: 'Refusals answered, by plane operation and refusal code.',
    labelNames: ['operation', 'code'] as const,
    registers: [registry],
  });
  const settles = new Counter({
    name: `${METRIC_PREFIX}settles_total`,
    help: 'Settles answered, by outcome: settled, already-settled, or the fault code.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const dispatches = new Counter({
    name: `${METRIC_PREFIX}dispatches_total`,
    help: 'Dispatches answered, by outcome: counted, the refusal code, or the fault code.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const planeSeconds = new Histogram({
    name: `${METRIC_PREFIX}plane_call_duration_seconds`,
    help: 'Latency of plane calls, store transactions included, in seconds.',
    labelNames: ['operation'] as const,
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: 'Latency of HTTP requests, in seconds, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });

  // The three gauges are filled from one read of every tenant per scrape: prom-client collects
  // metrics concurrently, so they share the read in flight instead of each reading the store.
  let inFlight: Promise<readonly Usage[]> | null = null;
  const everyTenantUsage = (): Promise<readonly Usage[]> => {
    inFlight ??= (async () => {
      const tenants = await options.plane.tenants();
      const figures: Usage[] = [];
      for (const tenant of tenants) figures.push(await options.plane.usage({ tenant }));
      return figures;
    })().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
  // Ranked once per read, however many gauges ask for it.
  let bounded: { readonly of: readonly Usage[]; readonly figures: TenantFigures } | null = null;
  const tenantUsage = async (): Promise<TenantFigures> => {
    const every = await everyTenantUsage();
    if (bounded?.of !== every) bounded = { of: every, figures: boundTenantFigures(every, tenantSeries) };
    return bounded.figures;
  };
  const tenantGauge = (name: string, help: string, value: (usage: Usage) => number, combine = (a: number, b: number) => a + b) =>
    new Gauge({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames: ['tenant'] as const,
      registers: [registry],
      async collect() {
        const figures = await tenantUsage();
        this.reset();
        for (const usage of figures.own) this.set({ tenant: usage.tenant }, value(usage));
        if (figures.other.length > 0) this.set({ tenant: OTHER_TENANTS_LABEL }, figures.other.reduce((sum, usage) => combine(sum, value(usage)), 0));
      },
    });
  new Gauge({
    name: `${METRIC_PREFIX}tenants`,
    help: 'Tenants with rows in the store, by whether they have their own per-tenant series (own) or are summed into tenant="other".',
    labelNames: ['series'] as const,
    registers: [registry],
    async collect() {
      const figures = await tenantUsage();
      this.set({ series: 'own' }, figures.own.length);
      this.set({ series: 'other' }, figures.other.length);
    },
  });
  tenantGauge('tenant_running_runs', 'Runs holding a slot, per tenant, read on scrape.', (usage) => usage.running);
  tenantGauge('tenant_reserved_tokens', "Tokens held by open runs in the tenant's current period, read on scrape.", (usage) => usage.reserved.tokens);
  tenantGauge(
    'tenant_reserved_minor_units',
    "Minor units held by open runs in the tenant's current period, read on scrape.",
    (usage) => usage.reserved.minorUnits,
  );
  // Per agent with ceilings in its tenant's quota, for the tenants shown on their own.
  new Gauge({
    name: `${METRIC_PREFIX}tenant_agent_running_runs`,
    help: "Runs of an agent holding a slot in a tenant, for agents the tenant's quota sets ceilings for, read on scrape.",
    labelNames: ['tenant', 'agent'] as const,
    registers: [registry],
    async collect() {
      const figures = await tenantUsage();
      this.reset();
      for (const usage of figures.own) for (const agent of usage.agents ?? []) this.set({ tenant: usage.tenant, agent: agent.agent }, agent.running);
    },
  });
  const ceilingRefusals = createPlaneMetrics(registry, METRIC_PREFIX, options.plane);
  createSpendMetrics(registry, METRIC_PREFIX, everyTenantUsage, tenantSeries);
  const perTenant = createTenantCounters(registry, METRIC_PREFIX, tenantSeries, OTHER_TENANTS_LABEL);

  tenantGauge('tenant_waiting_admissions', 'Admissions waiting for a slot, per tenant, read on scrape.', (usage) => usage.queue.depth);
  tenantGauge(
    'tenant_oldest_wait_seconds',
    'How long the oldest waiting admission of the tenant has waited, in seconds (0 when none), read on scrape; "other" shows the longest.',
    (usage) => (usage.queue.oldestWaitMs ?? 0) / 1000,
    Math.max,
  );

  const timed = async <T>(operation: string, call: () => Promise<T>): Promise<T> => {
    const stop = planeSeconds.startTimer({ operation });
    try {
      return await call();
    } finally {
      stop();
    }
  };
  const faultCode = (error: unknown): string =>
    typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
      ? (error as { code: string }).code
      : 'INTERNAL';

  const countOverrun = createOverrunCounter(registry, METRIC_PREFIX);
  const observeSweep = createSweepMetrics(registry, METRIC_PREFIX);
  const observeWebhookAttempt = createWebhookMetrics(registry, options.webhookOldestPendingAtMs, nowMs);

  return {
    registry,
    observeSweep,
    observeWebhookAttempt,
    refusalHistory,
    observeRequest(method, route, statusCode, seconds) {
      requestSeconds.observe({ method, route, status_code: String(statusCode) }, seconds);
    },
    meter(plane) {
      return {
        ...plane,
        admit: (input) =>
          timed('admit', async () => {
            const result = await plane.admit(input);
            admissions.inc({ outcome: result.ok ? 'admitted' : 'refused' });
            perTenant.admission(input.tenant, result.ok ? undefined : result.refusal.code);
            if (!result.ok) {
              refusals.inc({ operation: 'admit', code: result.refusal.code });
              refusalHistory.record(input.tenant, nowMs());
            }
            if (!result.ok && (result.refusal.code === 'TooManyRuns' || result.refusal.code === 'SpentOut')) {
              ceilingRefusals.inc({ code: result.refusal.code, bound: result.refusal.bound });
            }
            return result;
          }),
        settle: (input) =>
          timed('settle', async () => {
            try {
              const result = await plane.settle(input);
              settles.inc({ outcome: result.outcome });
              countOverrun(result);
              return result;
            } catch (error) {
              settles.inc({ outcome: faultCode(error) });
              throw error;
            }
          }),
        dispatch: (input) =>
          timed('dispatch', async () => {
            try {
              const result = await plane.dispatch(input);
              dispatches.inc({ outcome: result.ok ? 'counted' : result.refusal.code });
              if (!result.ok) {
                refusals.inc({ operation: 'dispatch', code: result.refusal.code });
                perTenant.refusedDispatch(input.tenant, result.refusal.code);
              }
              return result;
            } catch (error) {
              dispatches.inc({ outcome: faultCode(error) });
              throw error;
            }
          }),
        resume: (input) => timed('resume', () => plane.resume(input)),
        heartbeat: (input) => timed('heartbeat', () => plane.heartbeat(input)),
        sweep: (input) => timed('sweep', () => plane.sweep(input)),
        usage: (input) => timed('usage', () => plane.usage(input)),
        setQuota: (tenant, quota, by) => timed('setQuota', () => plane.setQuota(tenant, quota, by)),
        getQuota: (tenant) => timed('getQuota', () => plane.getQuota(tenant)),
        updateQuota: (tenant, patch, by) => timed('updateQuota', () => plane.updateQuota(tenant, patch, by)),
        halt: (input) => timed('halt', () => plane.halt(input)),
        lift: (input) => timed('lift', () => plane.lift(input)),
        halts: (tenant) => timed('halts', () => plane.halts(tenant)),
      };
    },
  };
}

/** The per-tenant figures of one scrape: the busiest tenants, each on its own, and the rest. */
interface TenantFigures {
  readonly own: readonly Usage[];
  readonly other: readonly Usage[];
}

// The busiest `limit` tenants by what they hold now (running runs, then reserved tokens, then
// reserved minor units; ties by name, so the choice is stable between scrapes), and the rest.
function boundTenantFigures(figures: readonly Usage[], limit: number): TenantFigures {
  const ranked = [...figures].sort(
    (a, b) =>
      b.running - a.running ||
      b.reserved.tokens - a.reserved.tokens ||
      b.reserved.minorUnits - a.reserved.minorUnits ||
      (a.tenant < b.tenant ? -1 : a.tenant > b.tenant ? 1 : 0),
  );
  const own: Usage[] = [];
  const other: Usage[] = [];
  for (const usage of ranked) {
    if (own.length < limit && usage.tenant !== OTHER_TENANTS_LABEL) own.push(usage);
    else other.push(usage);
  }
  return { own, other };
}
