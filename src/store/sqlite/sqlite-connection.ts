import type Database from 'better-sqlite3';

import { closedStoreError, toQuotaError } from './sqlite-errors.js';

/** Named parameters of one statement; every value SQLite can bind. */
export type SqlParams = Readonly<Record<string, string | number | bigint | null>>;

/**
 * One better-sqlite3 connection shared by a store and all its tenant handles: a cache of prepared
 * statements, the two transaction shapes the adapter uses, and the closed flag. Every fault that
 * leaves it is a `QuotaError` (translated by `sqlite-errors.ts`). better-sqlite3 is synchronous,
 * so a transaction body cannot `await`: that is why every decision it calls is a pure synchronous
 * function from `core/` (code-anchors, "The store port shape").
 */
export class SqliteConnection {
  #db: Database.Database | null;
  readonly #statements = new Map<string, Database.Statement>();
  // One transaction function for every body: better-sqlite3 builds four wrappers and their
  // properties each time `db.transaction()` is called, a cost the HTTP bench's profile showed
  // on every read and write.
  readonly #transaction: Database.Transaction<(body: () => unknown) => unknown>;

  constructor(db: Database.Database) {
    this.#db = db;
    this.#transaction = db.transaction((body: () => unknown) => body());
  }

  /** True once {@link close} ran. */
  get isClosed(): boolean {
    return this.#db === null;
  }

  /**
   * Runs `body` inside `BEGIN IMMEDIATE`: the write lock is taken before the first read, so two
   * processes deciding on one file serialise on the busy timeout instead of one failing with
   * SQLITE_BUSY when it upgrades a read to a write (DESIGN.md decision 13). Returning commits;
   * throwing rolls back and rethrows as a `QuotaError`.
   */
  write<T>(body: () => T): T {
    this.#open();
    try {
      return this.#transaction.immediate(body) as T;
    } catch (error) {
      throw toQuotaError(error);
    }
  }

  /** Runs `body` in a deferred (read) transaction, so its statements read one snapshot. */
  read<T>(body: () => T): T {
    this.#open();
    try {
      return this.#transaction.deferred(body) as T;
    } catch (error) {
      throw toQuotaError(error);
    }
  }

  /** First row of `sql`, or `undefined`. Call inside {@link write} or {@link read}. */
  get<Row>(sql: string, params: SqlParams): Row | undefined {
    return this.#prepare(sql).get(params) as Row | undefined;
  }

  /** Every row of `sql`. Call inside {@link write} or {@link read}. */
  all<Row>(sql: string, params: SqlParams): Row[] {
    return this.#prepare(sql).all(params) as Row[];
  }

  /** Runs a write statement and answers how many rows it changed. Call inside {@link write}. */
  run(sql: string, params: SqlParams): number {
    return this.#prepare(sql).run(params).changes;
  }

  /** Closes the connection; idempotent. Every later call throws `STORE_UNAVAILABLE`. */
  close(): void {
    const db = this.#db;
    if (db === null) return;
    this.#db = null;
    this.#statements.clear();
    try {
      db.close();
    } catch (error) {
      throw toQuotaError(error);
    }
  }

  #open(): Database.Database {
    if (this.#db === null) throw closedStoreError();
    return this.#db;
  }

  #prepare(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = this.#open().prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}
