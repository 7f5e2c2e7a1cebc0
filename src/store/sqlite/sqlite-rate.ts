import {
  countedSince,
  judgeRateBoundaries,
  rateBoundaryOrdinal,
  recordedRateInstantMs,
} from '../../core/rate-ordinal.js';
import { isCountableWindow, ratePruneFloorMs, rateWindowStartMs, type RateCeiling } from '../../core/rate.js';
import type { RateLimitedRefusal, UncountableRateRefusal } from '../../core/refusal.js';
import type { RateOutcome, RateReservation } from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import {
  INSERT_RATE,
  PRUNE_RATE,
  RATE_KEY_EXISTS,
  SELECT_FIRST_COUNTED_RATE,
  SELECT_RATE_AT_ORDINAL,
  SELECT_RATE_GRANT,
  UPSERT_RATE_GRANT,
} from './sqlite-queries.js';

/** The grant's counter row: its latest ordinal and recorded instant (none before its first dispatch). */
interface RateGrantRow {
  readonly last_ordinal: number;
  readonly last_at_ms: number;
}

function readGrant(conn: SqliteConnection, tenant: string, grant: string): RateGrantRow | undefined {
  return conn.get<RateGrantRow>(SELECT_RATE_GRANT, { tenant, grant });
}

/**
 * Judges `ceilings` against the stored dispatches of `(tenant, grant)` at `atMs`
 * (docs/design/rules.md#c39, #d7) with `judgeRateBoundaries` of `core/rate-ordinal.ts`: one point
 * lookup by ordinal per ceiling, and on a refusal one index seek for the true count, whatever the
 * window holds. Read-only.
 */
export function judgeRate(
  conn: SqliteConnection,
  tenant: string,
  grant: string,
  ceilings: readonly RateCeiling[],
  atMs: number,
): RateLimitedRefusal | UncountableRateRefusal | null {
  // An uncountable ceiling refuses before anything is read.
  if (!ceilings.every(isCountableWindow)) {
    return judgeRateBoundaries({ grant, ceilings, boundaries: [], atMs }) as UncountableRateRefusal;
  }
  const latestOrdinal = readGrant(conn, tenant, grant)?.last_ordinal ?? 0;
  const boundaries = ceilings.map((ceiling) => {
    const ordinal = rateBoundaryOrdinal(latestOrdinal, ceiling);
    if (ordinal === null) return null;
    return conn.get<{ reserved_at_ms: number }>(SELECT_RATE_AT_ORDINAL, { tenant, grant, ordinal })?.reserved_at_ms ?? null;
  });
  const verdict = judgeRateBoundaries({ grant, ceilings, boundaries, atMs });
  if (verdict === null || verdict.code === 'UncountableRate') return verdict;
  const sinceMs = rateWindowStartMs(atMs, verdict.ceiling.windowSeconds);
  const first = conn.get<{ ordinal: number }>(SELECT_FIRST_COUNTED_RATE, { tenant, grant, sinceMs });
  return {
    code: 'RateLimited',
    tenant,
    grant,
    ceiling: verdict.ceiling,
    reached: countedSince(latestOrdinal, first?.ordinal ?? null),
    retryAtMs: verdict.retryAtMs,
  };
}

/**
 * The body of `reserveRate` (docs/design/rules.md#c31–#c37), inside the caller's `BEGIN IMMEDIATE`
 * transaction, which serialises every rate reservation on the file and so each `(tenant, grant)`. A
 * present key succeeds unjudged and unpruned; otherwise prune that grant's rows at or before the
 * store-wide floor (its counter row stays), judge unless exempt, and record the dispatch under the
 * next ordinal at `recordedRateInstantMs` (never before the grant's latest). A refusal inserts
 * nothing but returns normally, so the prune still commits.
 */
export function reserveRateInTransaction(conn: SqliteConnection, tenant: string, r: RateReservation): RateOutcome {
  const key = { tenant, grant: r.grant, run: r.run, dispatch: r.dispatch };
  if (conn.get(RATE_KEY_EXISTS, key) !== undefined) return { ok: true };
  conn.run(PRUNE_RATE, { tenant, grant: r.grant, floorMs: ratePruneFloorMs(r.atMs) });
  if (!r.exempt) {
    const refusal = judgeRate(conn, tenant, r.grant, r.ceilings, r.atMs);
    if (refusal !== null) return { ok: false, refusal };
  }
  const latest = readGrant(conn, tenant, r.grant);
  const recorded = { ordinal: (latest?.last_ordinal ?? 0) + 1, recordedMs: recordedRateInstantMs(r.atMs, latest?.last_at_ms ?? null) };
  conn.run(INSERT_RATE, { ...key, ...recorded });
  conn.run(UPSERT_RATE_GRANT, { tenant, grant: r.grant, ...recorded });
  return { ok: true };
}
