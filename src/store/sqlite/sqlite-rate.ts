import {
  checkRate,
  isCountableWindow,
  ratePruneFloorMs,
  rateWindowStartMs,
  type RateCeiling,
} from '../../core/rate.js';
import type { RateLimitedRefusal, UncountableRateRefusal } from '../../core/refusal.js';
import type { RateOutcome, RateReservation } from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { INSERT_RATE, PRUNE_RATE, RATE_KEY_EXISTS, SELECT_RATE_INSTANTS } from './sqlite-queries.js';

/**
 * Judges `ceilings` against the stored dispatches of `(tenant, grant)` at `atMs` with the shared
 * `checkRate` (contract §4.6). Only rows strictly after the widest countable window's start are
 * read (through the `(tenant, grant_ref, reserved_at_ms)` index): older rows count in no window,
 * so the answer is the one `checkRate` gives over every row. Read-only.
 */
export function judgeRate(
  conn: SqliteConnection,
  tenant: string,
  grant: string,
  ceilings: readonly RateCeiling[],
  atMs: number,
): RateLimitedRefusal | UncountableRateRefusal | null {
  const countable = ceilings.filter(isCountableWindow);
  let instantsMs: number[] = [];
  // An uncountable ceiling refuses before anything is counted, and no ceiling needs no rows.
  if (countable.length === ceilings.length && countable.length > 0) {
    const widestSeconds = Math.max(...countable.map((ceiling) => ceiling.windowSeconds));
    const sinceMs = rateWindowStartMs(atMs, widestSeconds);
    instantsMs = conn
      .all<{ reserved_at_ms: number }>(SELECT_RATE_INSTANTS, { tenant, grant, sinceMs })
      .map((row) => row.reserved_at_ms);
  }
  return checkRate({ tenant, grant, ceilings, instantsMs, atMs });
}

/**
 * The body of `reserveRate` (contract §6.15), inside the caller's `BEGIN IMMEDIATE` transaction,
 * which serialises every rate reservation on the file and so each `(tenant, grant)`. A present key
 * succeeds unjudged and unpruned; otherwise prune that grant's rows at or before the store-wide
 * floor, judge unless exempt, and insert. A refusal inserts nothing but returns normally, so the
 * prune still commits, as the contract requires.
 */
export function reserveRateInTransaction(conn: SqliteConnection, tenant: string, r: RateReservation): RateOutcome {
  const key = { tenant, grant: r.grant, run: r.run, dispatch: r.dispatch };
  if (conn.get(RATE_KEY_EXISTS, key) !== undefined) return { ok: true };
  conn.run(PRUNE_RATE, { tenant, grant: r.grant, floorMs: ratePruneFloorMs(r.atMs) });
  if (!r.exempt) {
    const refusal = judgeRate(conn, tenant, r.grant, r.ceilings, r.atMs);
    if (refusal !== null) return { ok: false, refusal };
  }
  conn.run(INSERT_RATE, { ...key, atMs: r.atMs });
  return { ok: true };
}
