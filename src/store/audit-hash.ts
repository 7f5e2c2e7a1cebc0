import { createHash } from 'node:crypto';

import type { AuditEntry } from './types.js';

/** The hash a tenant's first audit row chains from: 64 zeros. */
export const AUDIT_GENESIS_HASH = '0'.repeat(64);

/**
 * SHA-256 (lowercase hex) over one audit row's content and the previous row's hash, so editing or
 * deleting any row breaks every hash after it (docs/design/rules.md#l31). Both backends call this
 * one function, so a chain written by one verifies under the other. The content is canonical JSON
 * with keys in a fixed order: tenant, seq, atMs, actor, basis, action, subject, detail (keys sorted
 * recursively), prevHash.
 */
export function auditRowHash(tenant: string, seq: number, entry: AuditEntry, prevHash: string): string {
  const content = canonicalJson({
    tenant,
    seq,
    atMs: entry.atMs,
    actor: entry.by.actor,
    basis: entry.by.basis,
    action: entry.action,
    subject: entry.subject,
    detail: entry.detail,
    prevHash,
  });
  return createHash('sha256').update(content, 'utf8').digest('hex');
}

/** JSON with object keys sorted at every depth; arrays keep their order. `undefined` members are dropped. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const member = (value as Record<string, unknown>)[key];
      if (member !== undefined) sorted[key] = sortKeys(member);
    }
    return sorted;
  }
  return value;
}
