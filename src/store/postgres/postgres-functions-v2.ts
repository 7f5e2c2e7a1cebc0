import { admitFunctionSql } from './postgres-sql-admit.js';
import { checkFunctionsSql } from './postgres-sql-checks.js';
import { lifecycleFunctionSql } from './postgres-sql-lifecycle.js';
import { rateFunctionSql } from './postgres-sql-rate.js';
import { reserveFunctionSql } from './postgres-sql-reserve.js';
import { settleFunctionSql } from './postgres-sql-settle.js';

/**
 * Migration 2 of the PostgreSQL schema `s` (quoted): the server-side decision functions, one per
 * hot operation, so an admission, a settlement or a dispatch is one round trip and one transaction
 * instead of four or five (issue #3: fewer round trips roughly doubles throughput). Each mirrors
 * the SQLite adapter and the pure decisions of `core/`; the conformance suite proves the two
 * backends answer alike. Order matters: later functions call earlier ones.
 */
export function postgresFunctionsV1(s: string): string {
  return [
    checkFunctionsSql(s),
    reserveFunctionSql(s),
    settleFunctionSql(s),
    rateFunctionSql(s),
    admitFunctionSql(s),
    lifecycleFunctionSql(s),
  ].join('\n');
}
