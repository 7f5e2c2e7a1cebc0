import type { Halt } from '../../core/halt-scope.js';
import { decodeHaltRow, decodePlaneHaltRow, type HaltRow, type PlaneHaltRow } from '../halt-rows.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { LIST_HALTS, SELECT_PLANE_HALT } from './sqlite-queries.js';

/**
 * Every standing halt of `tenant` in one read, bytewise by scope key (docs/design/rules.md#c23). An
 * unreadable row throws `STORE_CORRUPT` through `decodeHaltRow` and is never skipped.
 * Inside a write they are read once while nothing writes them (`cachedInWrite`).
 */
export function readHalts(conn: SqliteConnection, tenant: string): readonly Halt[] {
  return conn.cachedInWrite(`halts:${tenant}`, () => conn.all<HaltRow>(LIST_HALTS, { tenant }).map((row) => decodeHaltRow(tenant, row)));
}

/**
 * The standing plane-wide halt, or `null` (docs/design/rules.md#c49), read in the caller's
 * transaction; inside a write, once while nothing writes it (`cachedInWrite`).
 */
export function readPlaneHalt(conn: SqliteConnection): Halt | null {
  return conn.cachedInWrite('plane-halt', () => {
    const row = conn.get<PlaneHaltRow>(SELECT_PLANE_HALT, {});
    return row === undefined ? null : decodePlaneHaltRow(row);
  });
}

/**
 * The halts a decision of `tenant` reads (core/lifecycle/books.ts `halts`): the tenant's own and
 * the plane-wide halt, which covers every tenant (docs/design/rules.md#c49).
 */
export function readDecisionHalts(conn: SqliteConnection, tenant: string): readonly Halt[] {
  const own = readHalts(conn, tenant);
  const plane = readPlaneHalt(conn);
  return plane === null ? own : [...own, plane];
}
