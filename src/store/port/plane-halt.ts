import type { Halt } from '../../core/halt-scope.js';
import type { AuditEntry } from '../types.js';

/**
 * The plane-wide halt, a capability of the whole store (not of a tenant handle): at most one halt
 * over every tenant (scope `plane`), read by every decision inside its own transaction as one of
 * the tenant's halts, and thrown or lifted with its audit row in one transaction. Covered by
 * docs/design/rules.md#c49–#c52. Optional like `PlaneCeilingStore`, so third-party stores keep
 * compiling; both adapters have it, and the plane refuses a plane-wide halt on a store without it
 * (it could not enforce one; plane/plane-halt.ts).
 */
export interface PlaneHaltStore {
  /** The standing plane-wide halt (`scope: { kind: 'plane' }`), or `null`. An unreadable one throws `STORE_CORRUPT`. */
  getPlaneHalt?(): Promise<Halt | null>;
  /**
   * Throws (or re-throws, replacing) the plane-wide halt and appends `audit` to the chain of
   * `auditTenant` (the reserved chain `quotaplane:plane`), in one transaction. It applies to the
   * very next decision of every tenant, on every instance.
   */
  setPlaneHalt?(halt: Halt, audit: AuditEntry, auditTenant: string): Promise<void>;
  /**
   * Appends `audit` to the chain of `auditTenant` and removes the plane-wide halt only if it still
   * equals `standing` (reason, operator, instant and reach), in one transaction; answers whether
   * it was removed (docs/design/rules.md#c50).
   */
  liftPlaneHaltIf?(standing: Halt, audit: AuditEntry, auditTenant: string): Promise<boolean>;
}
