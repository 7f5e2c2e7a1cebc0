import { isQuotaError } from '../core/errors.js';
import { AUDIT_GENESIS_HASH, auditRowHash } from '../store/audit-hash.js';
import { compareBytewise } from '../store/byte-order.js';
import type { AuditStore } from '../store/store.js';
import type { AuditRecord } from '../store/types.js';
import type { AuditMismatch, AuditVerification, TenantAuditVerification, VerifyAuditInput } from './operator-types.js';
import type { PlaneContext } from './plane-context.js';
import { requireObject } from '../store/store-arguments.js';
import { storeCall, tenantHandle } from './store-call.js';
import { tenantsInScope } from './tenant-scope.js';

// Rows read per page of a tenant's chain.
const CHAIN_PAGE = 500;

/**
 * `Plane.verifyAudit` (docs/design/rules.md#l31, #l64): walks each tenant's chain in sequence order
 * and recomputes every row's hash from its content and the stored hash of the row before (genesis
 * for row 1). Chaining from the *stored* previous hash names the row that was edited: a row whose
 * content changed fails its own check, and one whose hash was recomputed to match breaks the row
 * after. A gap in the numbering means rows were deleted. Stops at each tenant's first bad row.
 */
export async function verifyAudit(context: PlaneContext, input: VerifyAuditInput = {}): Promise<AuditVerification> {
  const request = requireObject('request', input);
  const tenants = await chainsInScope(context, request.tenant);
  const results: TenantAuditVerification[] = [];
  for (const tenant of tenants) results.push(await verifyTenant(tenant, tenantHandle(context.store, tenant)));
  return { ok: results.every((result) => result.ok), tenants: results };
}

// The chains to walk: the one named, or every tenant's, those of deleted tenants included
// (docs/design/rules.md#l95-5: their chain is kept as the record, so it is verified too).
async function chainsInScope(context: PlaneContext, tenant: unknown): Promise<string[]> {
  const known = await tenantsInScope(context, tenant);
  const store = context.store;
  if (tenant !== undefined || store.auditChains === undefined) return known;
  const chains = await storeCall('auditChains', () => store.auditChains!());
  return [...new Set([...known, ...chains])].sort(compareBytewise);
}

async function verifyTenant(tenant: string, handle: AuditStore): Promise<TenantAuditVerification> {
  let previousHash = AUDIT_GENESIS_HASH;
  let expectedSeq = 1;
  let rows = 0;
  // The sequence number of a row that could not be decoded: the walk verifies the rows before it, then stops there.
  let unreadable: { seq: number; reason: string } | null = null;
  // Set when the page meant to end before the unreadable row read it again: fewer rows lie before it
  // than their numbers say, so one was deleted; the walk then reads one row at a time to name it.
  let rowByRow = false;
  for (;;) {
    const limit = unreadable === null ? CHAIN_PAGE : rowByRow ? 1 : unreadable.seq - expectedSeq;
    let page: AuditRecord[] = [];
    if (limit > 0) {
      try {
        page = await storeCall('auditChain', () => handle.auditChain({ afterSeq: expectedSeq - 1, limit }));
      } catch (error) {
        const seq = isQuotaError(error, 'STORE_CORRUPT') ? error.details.seq : undefined;
        if (typeof seq !== 'number') throw error;
        if (unreadable === null) {
          unreadable = { seq, reason: error instanceof Error ? error.message : String(error) };
          continue;
        }
        if (seq !== unreadable.seq) throw error;
        if (!rowByRow) {
          rowByRow = true;
          continue;
        }
        // Read one at a time, the next row is the unreadable one: the mismatch below names the row.
      }
    }
    for (const row of page) {
      if (row.seq !== expectedSeq) {
        return mismatch(tenant, rows, {
          seq: expectedSeq,
          problem: 'sequence',
          message: `audit row ${expectedSeq} of tenant '${tenant}' is missing (the next row is ${row.seq}): rows were deleted`,
        });
      }
      const entry = { atMs: row.atMs, by: row.by, action: row.action, subject: row.subject, detail: row.detail };
      if (auditRowHash(tenant, row.seq, entry, previousHash) !== row.hash) {
        return mismatch(tenant, rows, {
          seq: row.seq,
          problem: 'hash',
          message:
            `audit row ${row.seq} of tenant '${tenant}' (${row.action} ${row.subject}) does not match its hash: ` +
            `its content or the row before it was changed after it was written`,
        });
      }
      previousHash = row.hash;
      expectedSeq += 1;
      rows += 1;
    }
    if (unreadable !== null && (!rowByRow || page.length === 0)) {
      return mismatch(tenant, rows, {
        seq: expectedSeq,
        problem: unreadable.seq === expectedSeq ? 'unreadable' : 'sequence',
        message:
          unreadable.seq === expectedSeq
            ? `audit row ${unreadable.seq} of tenant '${tenant}' cannot be read: ${unreadable.reason}`
            : `audit row ${expectedSeq} of tenant '${tenant}' is missing (the next row is ${unreadable.seq}): rows were deleted`,
      });
    }
    if (page.length < limit) return { tenant, rows, ok: true, firstMismatch: null };
  }
}

function mismatch(tenant: string, rows: number, firstMismatch: AuditMismatch): TenantAuditVerification {
  return { tenant, rows, ok: false, firstMismatch };
}
