import type { Operator } from '../../core/operator.js';
import type { TenantQuota } from '../../core/quota.js';
import type { Spend } from '../../core/spend.js';
import type { TenantStore } from '../../store/store.js';
import type { AdmitRequest, AuditEntry } from '../../store/types.js';

/**
 * Shared fixtures of the conformance suite. Every instant is integer Unix milliseconds
 * (docs/design/decisions.md "Time in milliseconds").
 */

/** The fixed instant most cases run at, 1 760 000 000 s (2025-10-09 08:53:20 UTC), in ms. */
export const T_MS = 1_760_000_000_000;

/** The tenant most cases run as. */
export const ACME = 'acme';
/** A second tenant on the same backend, for isolation cases (G3, C40). */
export const GLOBEX = 'globex';

/**
 * An operator as the CLI records one: the name is asserted, nothing verified it
 * (docs/concepts/glossary.md, "operator").
 */
export const OPS_ALICE: Operator = { actor: 'ops-alice', basis: 'asserted' };
/** An operator as the HTTP API records one, after an API key was checked. */
export const OPS_CAROL: Operator = { actor: 'ops-carol', basis: 'authenticated' };

/**
 * A run id of the canonical shape `run_<ULID>` (docs/concepts/glossary.md, "run"), numbered so
 * ascending number is ascending id: `runId(3) < runId(4)`. Distinct `n` give distinct runs.
 */
export function runId(n: number): string {
  return `run_${String(n).padStart(26, '0')}`;
}

/** A dispatch key of 64 lowercase hex digits (a hash, as callers make them), distinct per `n`. */
export function dispatchKey(n: number): string {
  return n.toString(16).padStart(64, '0');
}

/** A spend of `tokens` tokens and no money. */
export function tokens(count: number): Spend {
  return { tokens: count, minorUnits: 0 };
}

/** A monthly quota bounding only tokens per period. */
export function tokenQuota(maxTokensPerPeriod: number): TenantQuota {
  return { period: 'monthly', maxTokensPerPeriod };
}

/** A monthly quota bounding only concurrent runs. */
export function slotQuota(maxConcurrentRuns: number): TenantQuota {
  return { period: 'monthly', maxConcurrentRuns };
}

/** 2026-01-05 08:00 UTC, in ms: the instant lifecycle cases admit at. */
export const JAN_MS = 1_767_600_000_000;
/** 2026-02-03 12:00 UTC, in ms: a resume one billing month after {@link JAN_MS}. */
export const FEB_MS = Date.UTC(2026, 1, 3, 12);
/** The lease a pass is opened with in lifecycle cases: one minute. */
export const LEASE_MS = 60_000;

/** An audit row to append, by {@link OPS_ALICE}. */
export function auditEntry(
  action: string,
  subject: string,
  atMs: number,
  detail: Readonly<Record<string, unknown>> = {},
): AuditEntry {
  return { atMs, by: OPS_ALICE, action, subject, detail };
}

/** Stores `quota` as `handle`'s tenant quota, with the audit row a `quota.set` carries. */
export async function configure(handle: TenantStore, quota: TenantQuota, atMs = JAN_MS): Promise<void> {
  await handle.setQuota(quota, auditEntry('quota.set', 'quota', atMs, { quota }));
}

/** An admission of `run` at {@link JAN_MS} with an empty budget, width 0 and a lease of {@link LEASE_MS}; `overrides` win. */
export function admission(run: string, overrides: Partial<AdmitRequest> = {}): AdmitRequest {
  return { run, budget: {}, width: 0, atMs: JAN_MS, leaseMs: LEASE_MS, ...overrides };
}
