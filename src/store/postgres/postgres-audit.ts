import { AUDIT_GENESIS_HASH, auditRowHash, canonicalJson } from '../audit-hash.js';
import type { AuditEntry, AuditRecord } from '../types.js';
import type { TransactionClient } from './postgres-connection.js';
import type { PostgresQueries } from './postgres-queries.js';

/**
 * Appends one audit row inside `tx`: appends of one tenant serialise on a transaction-scoped
 * advisory lock, then the next sequence number chains to the previous row's hash (genesis for the
 * first) with the backend-neutral `auditRowHash`. `detail` is stored as canonical JSON, so the
 * record returned equals the one `auditLog` reads back and its hash verifies. The hash is computed
 * here, in TypeScript, because it must be byte-for-byte the SQLite adapter's: that is why audited
 * operations compute it in TypeScript whatever path appends them.
 */
export async function appendAuditInTransaction(
  tx: TransactionClient,
  q: PostgresQueries,
  tenant: string,
  entry: AuditEntry,
): Promise<AuditRecord> {
  await tx.rows(q.lockAudit, [tenant]);
  const [head] = await tx.rows<{ seq: number; hash: string }>(q.selectAuditHead, [tenant]);
  const seq = (head?.seq ?? 0) + 1;
  const prevHash = head?.hash ?? AUDIT_GENESIS_HASH;
  const detailJson = canonicalJson(entry.detail);
  const detail = JSON.parse(detailJson) as Record<string, unknown>;
  const stored: AuditEntry = { atMs: entry.atMs, by: entry.by, action: entry.action, subject: entry.subject, detail };
  const hash = auditRowHash(tenant, seq, stored, prevHash);
  await tx.run(q.insertAudit, [tenant, seq, entry.atMs, entry.by.actor, entry.by.basis, entry.action, entry.subject, detailJson, prevHash, hash]);
  return { seq, ...stored, hash };
}
