import assert from 'node:assert/strict';

import { MAX_RATE_WINDOW_SECONDS } from '../../core/rate.js';
import type { TenantStore } from '../../store/store.js';
import { assertRefused, type Outcome, type RefusalOf } from './assertions.js';

/**
 * What a refusal might have touched besides the tenant-wide listings: the billing periods whose
 * settled and reserved totals it could change, the grants (each counted at `atMs`) whose dispatch
 * rows it could add, and the runs whose registry record it could create.
 */
export interface WriteProbe {
  readonly periods?: readonly string[];
  readonly grants?: readonly { readonly grant: string; readonly atMs: number }[];
  readonly runs?: readonly string[];
}

/** Everything a tenant's rows can show through the port, as far as a {@link WriteProbe} reaches. */
export interface TenantSnapshot {
  readonly running: number;
  readonly runningRuns: string[];
  readonly reservations: unknown[];
  readonly halts: unknown[];
  readonly quota: unknown;
  readonly audit: unknown[];
  readonly periods: Record<string, { spent: unknown; reserved: unknown }>;
  readonly dispatches: Record<string, number>;
  readonly runs: Record<string, unknown>;
}

// Far more rows than any case writes, so a listing is never cut short.
const LISTING_LIMIT = 1000;

/**
 * How many dispatches of `grant` the store counts in the widest window ending at `atMs`. The port
 * has no count query, so this asks `rateRoom` about a ceiling of 0 per 31 days: a ceiling of 0
 * never has room, so a correct store always refuses it, and `reached` is the true count
 * (docs/design/rules.md#c32). Fails when the store answers otherwise.
 */
export async function countedDispatches(handle: TenantStore, grant: string, atMs: number): Promise<number> {
  const outcome = await handle.rateRoom(grant, [{ count: 0, windowSeconds: MAX_RATE_WINDOW_SECONDS }], atMs);
  const refusal = assertRefused(outcome, 'RateLimited', {}, `rateRoom(${grant}, [0 per 31 days]) as a dispatch count`);
  return refusal.reached;
}

/** Reads a {@link TenantSnapshot} of `handle`'s tenant. */
export async function snapshotTenant(handle: TenantStore, probe: WriteProbe = {}): Promise<TenantSnapshot> {
  const periods: Record<string, { spent: unknown; reserved: unknown }> = {};
  for (const period of probe.periods ?? []) {
    periods[period] = { spent: await handle.spent(period), reserved: await handle.reserved(period) };
  }
  const dispatches: Record<string, number> = {};
  for (const { grant, atMs } of probe.grants ?? []) {
    dispatches[`${grant}@${atMs}`] = await countedDispatches(handle, grant, atMs);
  }
  const runs: Record<string, unknown> = {};
  for (const run of probe.runs ?? []) runs[run] = await handle.getRun(run);
  return {
    running: await handle.running(),
    runningRuns: await handle.runningRuns(LISTING_LIMIT),
    reservations: await handle.reservations(LISTING_LIMIT),
    halts: await handle.halts(),
    quota: await handle.getQuota(),
    audit: await handle.auditLog({ limit: LISTING_LIMIT }),
    periods,
    dispatches,
    runs,
  };
}

/**
 * Runs `act`, asserts it answered a refusal with `code` and `fields` (see `assertRefused`), and
 * asserts the tenant's snapshot is the same before and after: a refusal writes nothing, no slot,
 * hold, rate row, halt, run or audit row (docs/design/rules.md, rule 2 of "The rules in short").
 * Returns the refusal.
 */
export async function assertRefusedWithoutWrites<O extends Outcome, C extends string>(
  handle: TenantStore,
  probe: WriteProbe,
  act: () => Promise<O>,
  code: C,
  fields: Partial<RefusalOf<O, C>>,
  what: string,
): Promise<RefusalOf<O, C>> {
  const before = await snapshotTenant(handle, probe);
  const outcome = await act();
  const refusal = assertRefused(outcome, code, fields, what);
  const after = await snapshotTenant(handle, probe);
  assert.deepEqual(after, before, `${what}: the refusal wrote something`);
  return refusal;
}
