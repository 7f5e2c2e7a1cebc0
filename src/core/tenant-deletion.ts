import { QuotaError } from './errors.js';
import type { AuditEntry } from './lifecycle/types.js';
import type { Operator } from './operator.js';

/*
 * Deleting a tenant (docs/design/rules.md#l95-4–#l95-7): a customer who left is removed with every
 * record of it but its audit chain, which stays as the record of what was done, ending in the
 * deletion's own row. Nothing that still acts or still holds spend may be cut off by it: a run
 * whose process is alive, a slot, a hold, a pass whose spend is not booked, a caller waiting
 * for a slot, or a model call in flight. Those end first, by the commands named.
 */

/** The audit action of a tenant's deletion, the last row of its chain until the tenant is used again. */
export const TENANT_DELETE_ACTION = 'tenant.delete';

/**
 * What stands in the way of deleting a tenant, each a count read in the deleting transaction:
 * - `running`: registered runs of status `running` (their process may be alive);
 * - `slots`: slots held, by runs or by raw `reserve` callers;
 * - `holds`: holds of more than nothing in some unit;
 * - `unsettledPasses`: passes whose receipt is unwritten, of runs neither running (counted as
 *   such) nor released: a stranded, paused or withheld run's pass whose spend is not booked;
 * - `waiting`: admissions waiting for a slot;
 * - `uncollected`: admissions the queue decided (granted, or refused for a halt or spend) whose
 *   caller has not yet come back for the answer, while their lease runs: deleted under it, the
 *   caller's next look would find no place and be admitted afresh, into a tenant with no quota and
 *   no halt (a grant whose run is still running is counted as running too);
 * - `openCalls`: model calls in flight (rules.md#m1), open and before their deadline: deleted under
 *   them, the tenant made again under the same name would admit new calls beside the running ones
 *   (their reservations gone), and their reports would find nothing. Past its deadline an open call
 *   is over (rules.md#m7: it is booked at its worst case, and a later report is a conflict).
 */
export interface TenantDeletionBlockers {
  readonly running: number;
  readonly slots: number;
  readonly holds: number;
  readonly unsettledPasses: number;
  readonly waiting: number;
  readonly uncollected: number;
  readonly openCalls: number;
}

/**
 * The `CONFLICT` refusing the deletion of `tenant` while anything of {@link TenantDeletionBlockers}
 * is above 0 (rules.md#l95-4), naming each count and the command that ends it, with the counts in
 * `details`; or `null` when nothing stands in the way. Pure.
 */
export function tenantDeletionRefusal(tenant: string, blockers: TenantDeletionBlockers): QuotaError | null {
  const reasons: string[] = [];
  if (blockers.running > 0) reasons.push(`${blockers.running} running run(s): let them conclude (halt the tenant so no new run starts), or release them (quotaplane runs lists them)`);
  if (blockers.slots > 0 && blockers.slots !== blockers.running) reasons.push(`${blockers.slots} slot(s) held: release the runs holding them`);
  if (blockers.holds > 0) reasons.push(`${blockers.holds} hold(s) of spend not yet given back: conclude or release the runs holding them (quotaplane reservations lists them)`);
  if (blockers.unsettledPasses > 0) reasons.push(`${blockers.unsettledPasses} pass(es) whose spend is not booked: settle them (quotaplane attention lists them)`);
  if (blockers.waiting > 0) reasons.push(`${blockers.waiting} admission(s) waiting for a slot: halt the tenant so they are refused`);
  if (blockers.uncollected > 0) {
    reasons.push(`${blockers.uncollected} admission(s) granted or refused in the queue whose caller has not come back for the answer yet: wait for their callers to collect it, or for their leases to lapse`);
  }
  if (blockers.openCalls > 0) {
    reasons.push(
      `${blockers.openCalls} model call(s) in flight: release them (quotaplane calls open ${tenant} lists them, quotaplane calls release ${tenant} <callId> frees one), or wait for their deadline`,
    );
  }
  if (reasons.length === 0) return null;
  return new QuotaError('CONFLICT', `tenant '${tenant}' cannot be deleted yet: ${reasons.join('; ')}`, {
    details: { tenant, ...blockers },
  });
}

/**
 * The audit row a deletion appends to the tenant's own chain (rules.md#l95-5): `tenant.delete`
 * on subject `tenant`, with the operator's `reason`, the quota it had (`null` when none) and the
 * ids of the tenant's own API keys it deleted.
 */
export function tenantDeletionAudit(input: {
  readonly atMs: number;
  readonly by: Operator;
  readonly reason: string;
  readonly quota: unknown;
  readonly keys: readonly string[];
}): AuditEntry {
  return {
    atMs: input.atMs,
    by: input.by,
    action: TENANT_DELETE_ACTION,
    subject: 'tenant',
    detail: { reason: input.reason, quota: input.quota ?? null, keys: [...input.keys] },
  };
}
