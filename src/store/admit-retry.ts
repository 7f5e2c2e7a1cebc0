import type { AdmittedRun } from '../core/lifecycle/books.js';
import { corrupt, decodeRun, decodeSpend, type RunRow } from './rows.js';

/**
 * What an admission retry is judged on, read from the books in one snapshot: the run's registry
 * row with the request it was admitted with, its first pass, and whether it still holds the slot
 * and which hold it holds now. Both adapters select these columns under these names.
 */
export interface RetryFactsRow extends RunRow {
  readonly budget_json: string;
  readonly width: number;
  readonly pass_period: string | null;
  readonly lease_expires_at_ms: number | null;
  readonly settled_at_ms: number | null;
  readonly pass_hold_tokens: number | null;
  readonly pass_hold_minor_units: number | null;
  readonly slot_held: boolean | number;
  readonly hold_tokens: number | null;
  readonly hold_minor_units: number | null;
}

/**
 * The run as admitted, from its {@link RetryFactsRow}, for `answerAdmissionRetry`
 * (core/lifecycle/admission-retry.ts). An unreadable budget or amount is `STORE_CORRUPT`.
 */
export function decodeAdmittedRun(tenant: string, row: RetryFactsRow): AdmittedRun {
  const record = decodeRun(tenant, row);
  let budget: unknown;
  try {
    budget = JSON.parse(row.budget_json);
  } catch {
    budget = undefined;
  }
  if (typeof budget !== 'object' || budget === null || Array.isArray(budget)) throw corrupt(tenant, `run '${record.run}' with an unreadable budget`);
  const firstPass =
    row.pass_period === null || row.lease_expires_at_ms === null
      ? null
      : {
          period: row.pass_period,
          lease: { leaseExpiresAtMs: Number(row.lease_expires_at_ms), settledAtMs: row.settled_at_ms === null ? null : Number(row.settled_at_ms) },
          granted: row.pass_hold_tokens === null ? null : decodeSpend(tenant, 'a pass hold', row.pass_hold_tokens, row.pass_hold_minor_units),
        };
  return {
    record,
    budget: budget as Record<string, unknown>,
    width: Number(row.width),
    firstPass,
    slotHeld: row.slot_held === true || row.slot_held === 1,
    hold: row.hold_tokens === null ? null : decodeSpend(tenant, `the hold of run '${record.run}'`, row.hold_tokens, row.hold_minor_units),
  };
}
