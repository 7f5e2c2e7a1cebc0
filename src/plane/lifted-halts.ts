import type { Operator } from '../core/operator.js';
import type { AuditRecord } from '../store/types.js';

/**
 * A recorded lift of a halt (`quotaplane halts --lifted`, `GET …/halts?state=lifted`), read back
 * from the audit log: the scope, who lifted it and when, and the halt it ended (its reason, who
 * threw it and when). `seq` is the audit row that records the lift. Instants are Unix ms.
 */
export interface LiftedHalt {
  readonly scope: string;
  readonly by: Operator;
  readonly liftedAtMs: number;
  readonly reason: string;
  readonly thrownBy: Operator;
  readonly thrownAtMs: number;
  readonly seq: number;
}

/**
 * The lift a `lift` audit row records, from the detail `Plane.lift` writes (`reason`, `thrownBy`,
 * `thrownBasis`, `thrownAtMs`). A field missing from a hand-written row reads as empty or 0
 * rather than failing the whole listing; `verifyAudit` is what says whether a row is genuine.
 */
export function liftedHaltOf(record: AuditRecord): LiftedHalt {
  const detail = record.detail;
  return {
    scope: record.subject,
    by: record.by,
    liftedAtMs: record.atMs,
    reason: typeof detail.reason === 'string' ? detail.reason : '',
    thrownBy: {
      actor: typeof detail.thrownBy === 'string' ? detail.thrownBy : '',
      basis: detail.thrownBasis === 'authenticated' ? 'authenticated' : 'asserted',
    },
    thrownAtMs: typeof detail.thrownAtMs === 'number' ? detail.thrownAtMs : 0,
    seq: record.seq,
  };
}
