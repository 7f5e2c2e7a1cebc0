import { alertThresholdSource, alertThresholdsFor, thresholdStates, type BooksUnit, type ThresholdState, type ThresholdSource } from '../core/alert-thresholds.js';
import { requireAmount } from '../core/amounts.js';
import type { QuotaEvent } from '../core/events.js';
import { requireTenant } from '../core/identifiers.js';
import { UNLIMITED_QUOTA, type AgentCeilings, type TenantQuota } from '../core/quota.js';
import type { Spend } from '../core/spend.js';
import { requireObject } from '../store/store-arguments.js';
import type { EventLogStore } from '../store/store.js';
import { DEFAULT_LIST_LIMIT } from './operator-types.js';
import { parseLimit } from './plane-input.js';
import type { PlaneContext } from './plane-context.js';
import { usage } from './usage.js';
import { requireCapability, storeCall } from './store-call.js';

/**
 * What `Plane.events` reads: the events after `after` (a `seq`; absent or 0: from the first), at
 * most `limit` (default 100, at most 1000), of `tenant` only when given.
 */
export interface EventsInput {
  readonly after?: number | undefined;
  readonly limit?: number | undefined;
  readonly tenant?: string | undefined;
}

/**
 * A page of the event log, oldest first (docs/design/rules.md#e8). `next` is the cursor to ask
 * with next (the last event's `seq`, or `after` when the page is empty), so a reader that keeps
 * asking with it sees every event once, in commit order; `truncated` is true when more were there.
 */
export interface EventsPage {
  readonly events: readonly QuotaEvent[];
  readonly next: number;
  readonly truncated: boolean;
}

/** `Plane.events`: a page of the event log. Throws `STORE_MISCONFIGURED` on a store that keeps none. */
export async function events(context: PlaneContext, input: EventsInput = {}): Promise<EventsPage> {
  const request = requireObject('request', input);
  const after = request.after === undefined ? 0 : requireAmount('after', request.after);
  const limit = parseLimit(request.limit, DEFAULT_LIST_LIMIT);
  const tenant = request.tenant === undefined ? undefined : requireTenant('tenant', request.tenant);
  const store = requireCapability(context.store, context.store.backend, ['eventsAfter'], 'event log', 'list events') as Required<EventLogStore>;
  const rows = await storeCall('eventsAfter', () => store.eventsAfter(after, limit + 1, tenant));
  const page = rows.slice(0, limit);
  return { events: page, next: page.length === 0 ? after : (page[page.length - 1]?.seq ?? after), truncated: rows.length > limit };
}

/** One spend ceiling of a tenant (or of one of its agents) with its thresholds as they stand this period. */
export interface CeilingAlerts {
  readonly agent: string | null;
  readonly unit: BooksUnit;
  /** The ceiling, `null` when the unit has none (an absolute threshold still applies). */
  readonly ceiling: number | null;
  readonly settled: number;
  readonly source: ThresholdSource;
  readonly thresholds: readonly ThresholdState[];
}

/** A tenant's spend alerts for its current period: every ceiling with a threshold that applies. */
export interface AlertsStatus {
  readonly tenant: string;
  readonly period: string;
  readonly ceilings: readonly CeilingAlerts[];
}

const UNITS: readonly BooksUnit[] = ['tokens', 'minorUnits'];

function ceilingOf(ceilings: TenantQuota | AgentCeilings, unit: BooksUnit): number | null {
  return (unit === 'tokens' ? ceilings.maxTokensPerPeriod : ceilings.maxMinorUnitsPerPeriod) ?? null;
}

/**
 * `Plane.alerts` (docs/design/rules.md#e7): for the tenant's current period, each spend ceiling of
 * the tenant and of each agent its quota names, the thresholds that apply (and where they come
 * from), their amounts and whether settled spend has crossed them. Read-only.
 */
export async function alerts(context: PlaneContext, input: { readonly tenant: string }): Promise<AlertsStatus> {
  const tenant = requireTenant('tenant', requireObject('request', input).tenant);
  const figures = await usage(context, { tenant });
  const quota = figures.quota ?? UNLIMITED_QUOTA;
  const plane = context.store.getPlaneCeiling === undefined ? null : await storeCall('getPlaneCeiling', () => context.store.getPlaneCeiling!());
  const ceilings: CeilingAlerts[] = [];
  const add = (agent: string | null, own: TenantQuota | AgentCeilings, settled: Spend): void => {
    const thresholds = alertThresholdsFor(quota, agent, plane);
    const source = alertThresholdSource(quota, agent, plane);
    for (const unit of UNITS) {
      const ceiling = ceilingOf(own, unit);
      const states = thresholdStates(thresholds, unit, ceiling, settled[unit]);
      if (states.length > 0) ceilings.push({ agent, unit, ceiling, settled: settled[unit], source, thresholds: states });
    }
  };
  add(null, quota, figures.spent);
  for (const agent of figures.agents ?? []) add(agent.agent, agent.ceilings, agent.spent);
  return { tenant, period: figures.period, ceilings };
}
