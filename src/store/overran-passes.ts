import { overrunOf } from '../core/overrun.js';
import { decodeRunId, decodeSpend } from './rows.js';
import type { OverranPass } from './types.js';

/** The columns `overranPasses` reads on either backend. */
export interface OverranRow {
  readonly run_id: string;
  readonly epoch: number;
  readonly period: string | null;
  readonly tokens: number;
  readonly minor_units: number;
  readonly hold_tokens: number;
  readonly hold_minor_units: number;
  readonly settled_at_ms: number | null;
}

/**
 * The query of store.ts `overranPasses` with the tenant and limit placeholders of a backend
 * (`@tenant`/`@limit` on SQLite, `$1`/`$2` on PostgreSQL) and its schema prefix (`` or `"s".`).
 * A pass's receipt is in one of two places (never both): its own row (`receipt_*`, written by
 * `settlePass`) or `quota_settled` (the port's `settle`), so the query reads both.
 */
export function overranPassesSql(prefix: string, tenant: string, limit: string): string {
  return `SELECT run_id, epoch, period, tokens, minor_units, hold_tokens, hold_minor_units, settled_at_ms FROM (
    SELECT s.run_id, s.epoch, s.period, s.tokens, s.minor_units, p.hold_tokens, p.hold_minor_units, p.settled_at_ms
    FROM ${prefix}quota_settled s
    JOIN ${prefix}quota_passes p ON p.tenant = s.tenant AND p.run_id = s.run_id AND p.epoch = s.epoch
    WHERE s.tenant = ${tenant} AND p.hold_tokens IS NOT NULL
      AND ((p.hold_tokens > 0 AND s.tokens > p.hold_tokens) OR (p.hold_minor_units > 0 AND s.minor_units > p.hold_minor_units))
    UNION ALL
    SELECT p.run_id, p.epoch, p.period, p.receipt_tokens, p.receipt_minor_units, p.hold_tokens, p.hold_minor_units, p.settled_at_ms
    FROM ${prefix}quota_passes p
    WHERE p.tenant = ${tenant} AND p.receipt_tokens IS NOT NULL AND p.hold_tokens IS NOT NULL
      AND ((p.hold_tokens > 0 AND p.receipt_tokens > p.hold_tokens)
        OR (p.hold_minor_units > 0 AND p.receipt_minor_units > p.hold_minor_units))
  ) AS receipts ORDER BY run_id, epoch LIMIT ${limit}`;
}

/** Decodes one row of {@link overranPassesSql}. */
export function decodeOverran(tenant: string, row: OverranRow): OverranPass {
  const spend = decodeSpend(tenant, 'a receipt', row.tokens, row.minor_units);
  const hold = decodeSpend(tenant, 'a pass hold', row.hold_tokens, row.hold_minor_units);
  return {
    run: decodeRunId(tenant, 'receipt', row.run_id),
    epoch: Number(row.epoch),
    period: row.period,
    spend,
    hold,
    overrun: overrunOf(spend, hold),
    settledAtMs: Number(row.settled_at_ms ?? 0),
  };
}
