import { decideSettle } from '../../core/lifecycle/receipts.js';
import type { QuotaSettlement, SettleOutcome } from '../types.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { SqliteTenantBooks } from './sqlite-tenant-books.js';

/** The port's `settle`: core's `decideSettle` on the tenant's books, inside the caller's `BEGIN IMMEDIATE` transaction. */
export function settleInTransaction(conn: SqliteConnection, tenant: string, s: QuotaSettlement, day: string | null = null): SettleOutcome {
  return decideSettle(new SqliteTenantBooks(conn, tenant), s, day);
}
