import { admitFunctionSqlV2 } from './postgres-sql-admit-v2.js';
import { checkFunctionsSql } from './postgres-sql-checks.js';
import { lifecycleFunctionSqlV2 } from './postgres-sql-lifecycle-v2.js';
import { rateFunctionSql } from './postgres-sql-rate.js';
import { reserveFunctionSql } from './postgres-sql-reserve.js';
import { settleFunctionSql } from './postgres-sql-settle.js';

/**
 * Migration 2 of the PostgreSQL schema `s` (quoted): the server-side decision functions, one per
 * hot operation, so an admission, a settlement or a dispatch is one round trip and one transaction
 * instead of four or five (issue #3: fewer round trips roughly doubles throughput). Each mirrors
 * the SQLite adapter and the pure decisions of `core/`; the conformance suite proves the two
 * backends answer alike. Order matters: later functions call earlier ones. Frozen as released:
 * migration 4 (`postgres-functions-v4.ts`) replaces the run-lifecycle functions.
 */
export function postgresFunctionsV2(s: string): string {
  return [
    checkFunctionsSql(s),
    reserveFunctionSql(s),
    settleFunctionSql(s),
    rateFunctionSql(s),
    admitFunctionSqlV2(s),
    lifecycleFunctionSqlV2(s),
  ].join('\n');
}
