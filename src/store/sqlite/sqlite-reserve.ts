import { reserveTakingHold, type ReserveInput } from '../../core/lifecycle/reserve.js';
import type { ReserveOutcome } from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { SqliteTenantBooks } from './sqlite-tenant-books.js';

/**
 * The port's `reserve` (docs/design/rules.md#c1, #c12), decided by core's `reserveTakingHold`
 * inside the caller's `BEGIN IMMEDIATE` transaction: one writer at a time across every process, so
 * every count it reads, the plane-wide ones included, is exact. A refusal writes nothing.
 */
export function reserveInTransaction(conn: SqliteConnection, tenant: string, input: ReserveInput): ReserveOutcome {
  const reserved = reserveTakingHold(new SqliteTenantBooks(conn, tenant), input);
  return reserved.ok ? { ok: true } : reserved;
}
