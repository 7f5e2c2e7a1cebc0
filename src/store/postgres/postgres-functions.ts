import { admitFunctionSql } from './postgres-sql-admit.js';
import { batchFunctionSql } from './postgres-sql-batch.js';
import { booksFunctionsSql } from './postgres-sql-books.js';
import { checkFunctionsSql } from './postgres-sql-checks.js';
import { counterFunctionsSql } from './postgres-sql-counters.js';
import { passFunctionsSql } from './postgres-sql-passes.js';
import { rateFunctionSql } from './postgres-sql-rate.js';
import { reserveFunctionSql } from './postgres-sql-reserve.js';
import { settleFunctionSql } from './postgres-sql-settle.js';
import { waiterFunctionsSql } from './postgres-sql-waiters.js';

/**
 * The server-side decision functions of the quoted schema `s`, one per hot operation, so an
 * admission, a settlement or a dispatch is one round trip and one transaction. Each mirrors the
 * SQLite adapter and the pure decisions of `core/`; the conformance suite proves the two backends
 * answer alike. Order matters: later functions call earlier ones.
 */
export function postgresFunctions(s: string): string {
  return [
    checkFunctionsSql(s),
    booksFunctionsSql(s),
    counterFunctionsSql(s),
    reserveFunctionSql(s),
    settleFunctionSql(s),
    rateFunctionSql(s),
    passFunctionsSql(s),
    admitFunctionSql(s),
    waiterFunctionsSql(s),
    batchFunctionSql(s),
  ].join('\n');
}
