import { AUDIT_GENESIS_HASH, auditRowHash, canonicalJson } from '../audit-hash.js';
import type { AuditEntry, AuditRecord } from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { INSERT_AUDIT, SELECT_AUDIT_HEAD } from './sqlite-queries.js';

/**
 * Appends one audit row inside the caller's `BEGIN IMMEDIATE` transaction: the next sequence
 * number of the tenant, chained to the previous row's hash (genesis for the first) with the
 * backend-neutral `auditRowHash`. `detail` is stored as canonical JSON, so the record returned
 * here equals the one `auditLog` reads back and its hash verifies.
 */
export function appendAuditInTransaction(conn: SqliteConnection, tenant: string, entry: AuditEntry): AuditRecord {
  const head = conn.get<{ seq: number; hash: string }>(SELECT_AUDIT_HEAD, { tenant });
  const seq = (head?.seq ?? 0) + 1;
  const prevHash = head?.hash ?? AUDIT_GENESIS_HASH;
  const detailJson = canonicalJson(entry.detail);
  const detail = JSON.parse(detailJson) as Record<string, unknown>;
  const stored: AuditEntry = { atMs: entry.atMs, by: entry.by, action: entry.action, subject: entry.subject, detail };
  const hash = auditRowHash(tenant, seq, stored, prevHash);
  conn.run(INSERT_AUDIT, {
    tenant,
    seq,
    atMs: entry.atMs,
    actor: entry.by.actor,
    basis: entry.by.basis,
    action: entry.action,
    subject: entry.subject,
    detailJson,
    prevHash,
    hash,
  });
  return { seq, ...stored, hash };
}
