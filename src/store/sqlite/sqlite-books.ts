import { carryHold as carryHoldOnBooks } from '../../core/lifecycle/hold-moves.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { SqliteTenantBooks } from './sqlite-tenant-books.js';

/**
 * The port's `carry` inside the caller's `BEGIN IMMEDIATE` transaction: core's `carryHold`
 * (docs/design/rules.md#c17) on the tenant's books.
 */
export function carryHold(conn: SqliteConnection, tenant: string, run: string, period: string, day?: string | null): void {
  carryHoldOnBooks(new SqliteTenantBooks(conn, tenant), run, period, day);
}
