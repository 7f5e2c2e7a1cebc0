import type { AuditEntry, AuditRecord } from '../types.js';
import type { TenantScoped } from './tenant-scoped.js';

/**
 * The tenant's audit log: rows numbered and hash-chained per tenant, appended, listed newest first
 * and read back in order for verifying the chain. Covered by docs/design/rules.md#l28, #l30–#l32,
 * #l63, #l64 and #r8. Used by the plane's halts, API key administration, the audit listing and
 * the chain's verification (plane/verify-audit.ts).
 */
export interface AuditStore extends TenantScoped {
  /** Appends one audit row (numbered and hash-chained per tenant) and returns it. */
  appendAudit(entry: AuditEntry): Promise<AuditRecord>;
  /** The newest `limit` audit rows, newest first, optionally only of one `action`. */
  auditLog(options: { limit: number; action?: string }): Promise<AuditRecord[]>;
  /**
   * The audit rows with `seq > afterSeq`, in ascending `seq`, at most `limit`, exactly as stored
   * (for verifying the hash chain page by page). An unreadable row throws `STORE_CORRUPT` with
   * `details.seq` naming it.
   */
  auditChain(request: { afterSeq: number; limit: number }): Promise<AuditRecord[]>;
}
