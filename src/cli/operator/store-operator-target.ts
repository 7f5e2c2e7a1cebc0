import type { Operator } from '../../core/operator.js';
import { createPlane } from '../../plane/create-plane.js';
import { liftedHaltOf } from '../../plane/lifted-halts.js';
import type { QuotaStore } from '../../store/store.js';
import { UsageError } from '../usage-error.js';
import type { OperatorTarget } from './operator-target.js';

/**
 * The {@link OperatorTarget} over a store opened by the CLI: a plane on the wall clock, the
 * operator `by` (from `--actor`, basis `asserted`: nothing verified the name; contract §9.1), or
 * `null` when the command only reads. An act that writes without an operator is a usage error,
 * never attributed to `$USER` or anyone else. `close` closes the store.
 */
export function storeOperatorTarget(store: QuotaStore, url: string, by: Operator | null): OperatorTarget {
  const plane = createPlane({ store });
  const operator = (verb: string): Operator => {
    if (by === null) throw new UsageError(`${verb} writes, so it needs --actor <name> (recorded as asserted; never taken from $USER)`);
    return by;
  };
  return {
    description: `store ${url}`,
    tenants: () => plane.tenants(),
    halt: (input) => plane.halt({ ...input, by: operator('halt') }),
    lift: (input) => plane.lift({ ...input, by: operator('lift') }),
    halts: (tenant) => plane.halts(tenant),
    async liftedHalts(tenant, limit) {
      const page = await plane.auditLog({ tenant, limit, action: 'lift' });
      return { items: page.rows.map(liftedHaltOf), truncated: page.truncated };
    },
    usage: (tenant) => plane.usage({ tenant }),
    runs: (input) => plane.runs(input),
    reservations: (input) => plane.reservations(input),
    release: (input) => plane.release({ ...input, by: operator('release') }),
    settle: (input) => plane.settle({ ...input, by: operator('settle') }),
    attention: (input) => plane.attention(input),
    getQuota: (tenant) => plane.getQuota(tenant),
    setQuota: (tenant, quota) => plane.setQuota(tenant, quota, operator('quota set')),
    auditLog: (input) => plane.auditLog(input),
    verifyAudit: (input) => plane.verifyAudit(input),
    sweep: (input) => plane.sweep(input),
    close: () => store.close(),
  };
}
