import type { TenantQuota } from '../../core/quota.js';
import type { SpentOutRefusal } from '../../core/refusal.js';
import { concurrencyRefusal } from '../../core/reserve-decision.js';
import { checkSpend } from '../../core/spend-check.js';
import type { ReserveOutcome, SpendHold } from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { dayOf } from '../../core/period-books.js';
import { putHold } from './sqlite-books.js';
import { INSERT_SLOT, SELECT_PERIOD_FIGURES, SELECT_SLOT_SNAPSHOT } from './sqlite-queries.js';
import { decodeSpend } from '../rows.js';

/** What a reserve decides on: the run, the quota in force, the hold it asks for (or none), and the instant (Unix ms). */
export interface ReserveInput {
  readonly run: string;
  readonly quota: TenantQuota;
  readonly hold: SpendHold | null;
  readonly atMs: number;
}

interface SlotSnapshotRow {
  readonly slot_held: number;
  readonly hold_held: number;
  readonly running: number;
}

interface PeriodFiguresRow {
  readonly settled_tokens: number;
  readonly settled_minor_units: number;
  readonly reserved_tokens: number;
  readonly reserved_minor_units: number;
}

/**
 * The body of `reserve` (contract §6.2), run inside the caller's `BEGIN IMMEDIATE` transaction so
 * the decision and the insert are one (invariant 1). Fast path: without a concurrency ceiling or a
 * hold there is nothing to decide, so the slot is inserted if absent. Otherwise read the slot
 * snapshot, judge concurrency with the full count, judge spend (settled and reserved from one
 * statement) only when a hold is asked for and the run holds none, and insert hold and slot.
 * A refusal writes nothing, not even the slot.
 */
export function reserveInTransaction(conn: SqliteConnection, tenant: string, input: ReserveInput): ReserveOutcome {
  const key = { tenant, run: input.run, atMs: input.atMs };
  if (input.quota.maxConcurrentRuns === undefined && input.hold === null) {
    conn.run(INSERT_SLOT, key);
    return { ok: true };
  }
  const snapshot = conn.get<SlotSnapshotRow>(SELECT_SLOT_SNAPSHOT, key);
  const slotHeld = snapshot?.slot_held === 1;
  const holdHeld = snapshot?.hold_held === 1;
  const running = snapshot?.running ?? 0;
  const tooMany = concurrencyRefusal(tenant, input.quota, { slotHeld, running });
  if (tooMany !== null) return { ok: false, refusal: tooMany };
  // A run that already holds spend is neither re-checked nor re-held: the existing hold wins.
  if (input.hold !== null && !holdHeld) {
    const hold = input.hold;
    const spentOut = spendRefusal(conn, tenant, input.quota, hold);
    if (spentOut !== null) return { ok: false, refusal: spentOut };
    putHold(conn, tenant, input.run, hold.period, dayOf(hold.period, input.atMs), hold.amount);
  }
  conn.run(INSERT_SLOT, key);
  return { ok: true };
}

/**
 * The `SpentOut` refusal `reserve` would answer for `hold` under `quota` from the period's figures
 * as they stand (settled and reserved from one statement), or `null` when it fits. Read-only.
 */
export function spendRefusal(conn: SqliteConnection, tenant: string, quota: TenantQuota, hold: SpendHold): SpentOutRefusal | null {
  const figures = conn.get<PeriodFiguresRow>(SELECT_PERIOD_FIGURES, { tenant, period: hold.period });
  return checkSpend({
    tenant,
    period: hold.period,
    quota,
    settled: decodeSpend(tenant, 'settled spend', figures?.settled_tokens, figures?.settled_minor_units),
    reserved: decodeSpend(tenant, 'reserved spend', figures?.reserved_tokens, figures?.reserved_minor_units),
    requested: hold.amount,
  });
}
