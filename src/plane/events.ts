import { alertThresholdSource, alertThresholdsFor } from '../core/alert-threshold-source.js';
import { thresholdStates, type BooksUnit } from '../core/alert-thresholds.js';
import { requireAmount } from '../core/amounts.js';
import { invalidArgument, QuotaError } from '../core/errors.js';
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
import type { AlertsStatus, CeilingAlerts, EventsInput, EventsPage } from './event-types.js';

/**
 * `Plane.events`: a page of the event log. Throws `STORE_MISCONFIGURED` on a store that keeps none,
 * and `CONFLICT` for a cursor past the newest event (it cannot have come from this log).
 */
export async function events(context: PlaneContext, input: EventsInput = {}): Promise<EventsPage> {
  const request = requireObject('request', input);
  const tenant = request.tenant === undefined ? undefined : requireTenant('tenant', request.tenant);
  const store = requireCapability(context.store, context.store.backend, ['eventsAfter', 'newestEvents'], 'event log', 'list events') as Required<EventLogStore>;
  if (request.last !== undefined) {
    if (request.after !== undefined || request.limit !== undefined) throw invalidArgument('last', 'reads the newest events on its own; leave out after and limit (ask with after: next from then on)');
    const last = parseLimit(request.last, DEFAULT_LIST_LIMIT);
    const tail = await storeCall('newestEvents', () => store.newestEvents(last, tenant));
    return { events: tail, next: tail.at(-1)?.seq ?? 0, truncated: false };
  }
  const after = request.after === undefined ? 0 : requireAmount('after', request.after);
  const limit = parseLimit(request.limit, DEFAULT_LIST_LIMIT);
  const rows = await storeCall('eventsAfter', () => store.eventsAfter(after, limit + 1, tenant));
  if (rows.length === 0 && after > 0) await refusePastTheEnd(store, after);
  const page = rows.slice(0, limit);
  return { events: page, next: page.length === 0 ? after : (page[page.length - 1]?.seq ?? after), truncated: rows.length > limit };
}

// A cursor past the newest event did not come from this log (another store, or a store restored
// from before it was read): answering "nothing new" would skip every event up to it, silently.
async function refusePastTheEnd(store: Required<EventLogStore>, after: number): Promise<void> {
  const newest = (await storeCall('newestEvents', () => store.newestEvents(1)))[0]?.seq ?? 0;
  if (after <= newest) return;
  throw new QuotaError(
    'CONFLICT',
    `after ${after} is past the newest event of this store (${newest}): the cursor comes from another store, or from before a restore; read again from a seq at or below ${newest} (the events you have not seen are there)`,
    { details: { after, newest } },
  );
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
