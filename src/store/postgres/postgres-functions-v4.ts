import { admitFunctionSql } from './postgres-sql-admit.js';
import { passFunctionsSql } from './postgres-sql-passes.js';

/**
 * The functions of migration 4 (quoted schema `s`; issue #5): the run-lifecycle functions of
 * migration 2 replaced for leases, `Withheld` and run statuses with their instants, plus the
 * heartbeat and the sweep. Order matters: `quota_admit` calls the new `quota_first_grant`.
 */
export function postgresFunctionsV4(s: string): string {
  return [passFunctionsSql(s), admitFunctionSql(s)].join('\n');
}
