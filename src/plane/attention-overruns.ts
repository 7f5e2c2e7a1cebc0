import { periodKey } from '../core/period.js';
import { countedKeys } from '../core/period-books.js';
import type { OperatorStore, TenantStore } from '../store/store.js';
import type { AttentionCondition, Remedy } from './operator-types.js';
import { storeCall } from './store-call.js';

/*
 * The overrun kinds of `attention` (docs/design/rules.md#l92): `run.overran`, a
 * settled pass that ran over its hold, and `spend.overrun`, the tenant's current period over its
 * ceiling, by how much and which runs overran in it. Both are facts to look at, not states a verb
 * ends: the remedy says what a person can do.
 */

// How many overran passes one `spend.overrun` condition names at most.
const NAMED_RUNS = 20;

const AUDIT_REMEDY = (tenant: string): Remedy => ({
  text: 'check the runs that reported more than their per-call bound; raise the ceiling or lower the budgets if the spend was expected',
  cli: [`quotaplane status --tenant ${tenant}`, `quotaplane attention --tenant ${tenant}`],
  http: [`GET /v1/tenants/${encodeURIComponent(tenant)}/usage`],
});

/** `run.overran`: each settled pass that ran over its hold, since it settled. */
export async function overranRuns(tenant: string, handle: OperatorStore, want: number, atMs: number): Promise<AttentionCondition[]> {
  const rows = await storeCall('overranPasses', () => handle.overranPasses({ limit: want }));
  return rows.map((pass) => ({
    kind: 'run.overran',
    tenant,
    run: pass.run,
    epoch: pass.epoch,
    halt: null,
    sinceMs: pass.settledAtMs,
    ageMs: Math.max(0, atMs - pass.settledAtMs),
    summary:
      `pass ${pass.epoch} of run '${pass.run}' (tenant '${tenant}') settled ${pass.spend.tokens} tokens and ` +
      `${pass.spend.minorUnits} minor units in ${pass.period ?? 'no period'}, over its hold by ${pass.overrun.tokens} tokens ` +
      `and ${pass.overrun.minorUnits} minor units`,
    remedy: AUDIT_REMEDY(tenant),
  }));
}

/**
 * `spend.overrun`: the tenant's current period (under its stored quota, at `atMs`) when its settled
 * spend is over a ceiling, naming by how much and the runs that overran in it. At most one.
 */
export async function overrunPeriods(tenant: string, handle: TenantStore, want: number, atMs: number): Promise<AttentionCondition[]> {
  if (want <= 0) return [];
  const quota = await storeCall('getQuota', () => handle.getQuota());
  if (quota === null) return [];
  const period = periodKey(quota.period, atMs);
  const spent = await storeCall('spent', () => handle.spent(period));
  const overTokens = quota.maxTokensPerPeriod === undefined ? 0 : Math.max(0, spent.tokens - quota.maxTokensPerPeriod);
  const overMinor = quota.maxMinorUnitsPerPeriod === undefined ? 0 : Math.max(0, spent.minorUnits - quota.maxMinorUnitsPerPeriod);
  if (overTokens === 0 && overMinor === 0) return [];
  const passes = await storeCall('overranPasses', () => handle.overranPasses({ limit: NAMED_RUNS }));
  const runs = [...new Set(passes.filter((pass) => pass.period !== null && countedKeys(pass.period, null).includes(period)).map((pass) => pass.run))];
  return [
    {
      kind: 'spend.overrun',
      tenant,
      run: runs[0] ?? '',
      epoch: null,
      halt: null,
      sinceMs: atMs,
      ageMs: 0,
      summary:
        `period ${period} of tenant '${tenant}' is over its ceiling by ${overTokens} tokens and ${overMinor} minor units` +
        (runs.length === 0 ? '' : `; runs that overran their hold: ${runs.join(', ')}`),
      remedy: AUDIT_REMEDY(tenant),
    },
  ];
}
