import type { Halt } from '../../core/halt-scope.js';
import { decodeHaltRow, type HaltRow } from '../halt-rows.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { LIST_HALTS } from './sqlite-queries.js';

/**
 * Every standing halt of `tenant` in one read, bytewise by scope key (docs/design/rules.md#c23). An
 * unreadable row throws `STORE_CORRUPT` through `decodeHaltRow` and is never skipped.
 * Inside a write they are read once while nothing writes them (`cachedInWrite`).
 */
export function readHalts(conn: SqliteConnection, tenant: string): readonly Halt[] {
  return conn.cachedInWrite(`halts:${tenant}`, () => conn.all<HaltRow>(LIST_HALTS, { tenant }).map((row) => decodeHaltRow(tenant, row)));
}
