import { flooredSub } from '../core/amounts.js';
import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';
import { withheldBy, withheldScopeKey } from '../core/lifecycle/run-rules.js';
import type { TenantStore } from '../store/store.js';
import {
  strandedRemedy,
  staleHoldRemedy,
  unsettledPassRemedy,
  withheldRemedy,
} from './attention-remedies.js';
import {
  ATTENTION_KINDS,
  DEFAULT_HOLD_STALE_AFTER_MS,
  DEFAULT_LIST_LIMIT,
  type AttentionCondition,
  type AttentionInput,
  type AttentionKind,
  type AttentionReport,
} from './operator-types.js';
import { attentionItems } from './attention-items.js';
import { overranRuns, overrunPeriods } from './attention-overruns.js';
import { instantOf, type PlaneContext } from './plane-context.js';
import { parseLimit } from './plane-input.js';
import { requireObject } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';
import { tenantsInScope } from './tenant-scope.js';
import { isReservedTenant } from '../core/identifiers.js';
import type { Halt } from '../core/halt-scope.js';
import { getPlaneHalt } from './plane-halt.js';

// What one kind's reader answers for one tenant: its conditions, reading at most `want` rows (one
// more than the page still has room for), so a full read proves there were more.
// `planeHalt` is the standing plane-wide halt, read once per report (docs/design/rules.md#c50).
type KindReader = (
  tenant: string,
  handle: TenantStore,
  want: number,
  atMs: number,
  holdStaleAfterMs: number,
  planeHalt: Halt | null,
) => Promise<AttentionCondition[]>;

const age = (atMs: number, sinceMs: number): number => flooredSub(atMs, sinceMs);

const READERS: Record<AttentionKind, KindReader> = {
  'run.stranded': async (tenant, handle, want, atMs) => {
    const rows = await storeCall('runs', () => handle.runs({ statuses: ['stranded'], limit: want }));
    return rows.map((run) => ({
      kind: 'run.stranded',
      tenant,
      run: run.run,
      epoch: run.lastEpoch,
      halt: null,
      sinceMs: run.statusSinceMs,
      ageMs: age(atMs, run.statusSinceMs),
      summary:
        `run '${run.run}' of tenant '${tenant}' lost its lease (pass ${run.lastEpoch}) and was stranded: ` +
        `its slot is back, and any spend it holds stays held until its real spend is known`,
      remedy: strandedRemedy(tenant, run),
    }));
  },
  'run.withheld': async (tenant, handle, want, atMs, _holdStaleAfterMs, planeHalt) => {
    const rows = await storeCall('runs', () => handle.runs({ statuses: ['withheld'], limit: want }));
    if (rows.length === 0) return [];
    const own = await storeCall('halts', () => handle.halts());
    const halts = planeHalt === null ? own : [...own, planeHalt];
    return rows.map((run) => {
      const refusal = withheldBy(tenant, halts, { agent: run.agent ?? undefined, chain: run.chain ?? undefined });
      const halt = refusal === null ? null : withheldScopeKey(refusal);
      return {
        kind: 'run.withheld',
        tenant,
        run: run.run,
        epoch: null,
        halt,
        sinceMs: run.statusSinceMs,
        ageMs: age(atMs, run.statusSinceMs),
        summary:
          refusal === null
            ? `run '${run.run}' of tenant '${tenant}' was withheld by a halt that has since been lifted`
            : refusal.subject !== undefined
              ? `run '${run.run}' of tenant '${tenant}' is withheld: authority of '${refusal.subject}' was withdrawn (${refusal.reason})`
              : `run '${run.run}' of tenant '${tenant}' is withheld by the halt on ${halt ?? 'its scope'} (${refusal.reason})`,
        remedy: withheldRemedy(tenant, run.run, halt),
      };
    });
  },
  'hold.stale': async (tenant, handle, want, atMs, holdStaleAfterMs) => {
    const idleSinceMs = flooredSub(atMs, holdStaleAfterMs);
    const rows = await storeCall('idleHolds', () => handle.idleHolds({ idleSinceMs, limit: want }));
    return rows.map((hold) => ({
      kind: 'hold.stale',
      tenant,
      run: hold.run,
      epoch: null,
      halt: null,
      sinceMs: hold.idleSinceMs,
      ageMs: age(atMs, hold.idleSinceMs),
      summary:
        `run '${hold.run}' of tenant '${tenant}' is paused and still holds ${hold.remaining.tokens} tokens and ` +
        `${hold.remaining.minorUnits} minor units in ${hold.period}`,
      remedy: staleHoldRemedy(tenant, hold.run),
    }));
  },
  'pass.unsettled': async (tenant, handle, want, atMs) => {
    const rows = await storeCall('unsettledPasses', () => handle.unsettledPasses({ atMs, limit: want }));
    return rows.map((pass) => ({
      kind: 'pass.unsettled',
      tenant,
      run: pass.run,
      epoch: pass.epoch,
      halt: null,
      sinceMs: pass.leaseExpiresAtMs,
      ageMs: age(atMs, pass.leaseExpiresAtMs),
      summary: `pass ${pass.epoch} of run '${pass.run}' (tenant '${tenant}') lost its lease and never settled, so its spend is not booked`,
      remedy: unsettledPassRemedy(tenant, pass),
    }));
  },
  'run.overran': overranRuns,
  'spend.overrun': overrunPeriods,
};

/**
 * `Plane.attention`: for each kind, walks the tenants in scope in byte order and
 * collects conditions until `limit`, asking each tenant for one row more than the room left, so
 * `truncated` is known rather than guessed. Read-only; the reads are separate, so under traffic
 * each condition is true when read, not all in one snapshot.
 */
export async function attention(context: PlaneContext, input: AttentionInput = {}): Promise<AttentionReport> {
  const request = requireObject('request', input);
  const atMs = instantOf(context, request.atMs);
  const limit = parseLimit(request.limit, DEFAULT_LIST_LIMIT);
  const holdStaleAfterMs = parseStaleAge(request.holdStaleAfterMs);
  // quotaplane's own audit chains (`quotaplane:…`) are no tenant that needs a person.
  const tenants = (await tenantsInScope(context, request.tenant)).filter((tenant) => request.tenant !== undefined || !isReservedTenant(tenant));

  const planeHalt = await getPlaneHalt(context);
  const conditions: AttentionCondition[] = [];
  const truncatedKinds: AttentionKind[] = [];
  for (const kind of ATTENTION_KINDS) {
    const found: AttentionCondition[] = [];
    for (const tenant of tenants) {
      const room = limit - found.length;
      const rows = await READERS[kind](tenant, tenantHandle(context.store, tenant), room + 1, atMs, holdStaleAfterMs, planeHalt);
      found.push(...rows.slice(0, room));
      if (rows.length > room) {
        truncatedKinds.push(kind);
        break;
      }
    }
    conditions.push(...found);
  }
  return {
    atMs,
    holdStaleAfterMs,
    needsAttention: conditions.length > 0,
    conditions,
    items: attentionItems(conditions),
    truncated: truncatedKinds.length > 0,
    truncatedKinds,
  };
}

function parseStaleAge(value: unknown): number {
  if (value === undefined) return DEFAULT_HOLD_STALE_AFTER_MS;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalidArgument('holdStaleAfterMs', `must be a non-negative integer number of milliseconds, got ${describe(value)}`);
  }
  return value;
}
