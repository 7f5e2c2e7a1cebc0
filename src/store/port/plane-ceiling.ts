import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import type { AuditEntry, PlaneUsage } from '../types.js';

/**
 * The plane-wide ceiling, a capability of the whole store (not of a tenant handle): the stored
 * ceiling, replaced with its audit row in one transaction, and the usage across every tenant.
 * Covered by docs/design/rules.md#k1–#k5 and #k11, #k14 (racing under it). Every member is
 * optional like `ApiKeysCapability` so third-party stores keep compiling; both adapters have
 * them, and the plane refuses to set a plane-wide ceiling on a store without them (it could not
 * enforce it; plane/plane-ceiling.ts).
 */
export interface PlaneCeilingStore {
  /** The stored plane-wide ceiling, or `null` when none was set (then no plane-wide ceiling applies). */
  getPlaneCeiling?(): Promise<PlaneCeiling | null>;
  /**
   * Replaces the plane-wide ceiling and appends `audit` to the chain of `auditTenant` (the reserved
   * chain `quotaplane:plane`), in one transaction. Every admission reads it inside its own
   * transaction, so it applies to the very next admission on every instance.
   */
  setPlaneCeiling?(plane: PlaneCeiling, audit: AuditEntry, auditTenant: string): Promise<void>;
  /** Slots across every tenant, and per agent name in `agents` (read-only, one snapshot). */
  planeUsage?(agents: readonly string[]): Promise<PlaneUsage>;
}
