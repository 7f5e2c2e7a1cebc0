import type { QueueBooks } from '../../core/lifecycle/waiting.js';
import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { SELECT_TURN, UPSERT_TURN, WAITING_TENANTS } from './sqlite-waiter-queries.js';
import { readPlaneCeiling, SqliteTenantBooks } from './sqlite-tenant-books.js';

/*
 * The waiting queues of every tenant of a SQLite file (core/lifecycle/waiting.ts `QueueBooks`),
 * one statement per fact inside the caller's `BEGIN IMMEDIATE` transaction: the write lock covers
 * every tenant of the file, so a plane-wide round serves every tenant with a live waiter.
 * Mirrors postgres-queue-books.ts.
 */

/** The queues of every tenant on the file, and their fair turns, in the caller's transaction. */
export class SqliteQueueBooks implements QueueBooks {
  readonly #conn: SqliteConnection;

  constructor(conn: SqliteConnection) {
    this.#conn = conn;
  }

  tenant(tenant: string): SqliteTenantBooks {
    return new SqliteTenantBooks(this.#conn, tenant);
  }

  planeCeiling(): PlaneCeiling | null {
    return readPlaneCeiling(this.#conn);
  }

  waitingTenants(atMs: number): readonly string[] {
    return this.#conn.all<{ tenant: string }>(WAITING_TENANTS, { atMs }).map((row) => row.tenant);
  }

  turn(tenant: string): number {
    return this.#conn.get<{ vtime: number }>(SELECT_TURN, { tenant })?.vtime ?? 0;
  }

  setTurn(tenant: string, vtime: number): void {
    this.#conn.run(UPSERT_TURN, { tenant, vtime });
  }
}
