import { judgeRate as judgeRateOnBooks, reserveRate } from '../../core/lifecycle/rate-decision.js';
import type { RateCeiling } from '../../core/rate.js';
import type { RateLimitedRefusal, UncountableRateRefusal } from '../../core/refusal.js';
import type { RateOutcome, RateReservation } from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { SqliteTenantBooks } from './sqlite-tenant-books.js';

/** The port's `rateRoom` judgement (core's `judgeRate`) on the tenant's books, in the caller's read transaction. */
export function judgeRate(
  conn: SqliteConnection,
  tenant: string,
  grant: string,
  ceilings: readonly RateCeiling[],
  atMs: number,
): RateLimitedRefusal | UncountableRateRefusal | null {
  return judgeRateOnBooks(new SqliteTenantBooks(conn, tenant), tenant, grant, ceilings, atMs);
}

/**
 * The port's `reserveRate` (core's `reserveRate`, docs/design/rules.md#c31–#c37) inside the
 * caller's `BEGIN IMMEDIATE` transaction, which serialises every rate reservation on the file and
 * so each (tenant, grant).
 */
export function reserveRateInTransaction(conn: SqliteConnection, tenant: string, r: RateReservation): RateOutcome {
  return reserveRate(new SqliteTenantBooks(conn, tenant), tenant, r);
}
