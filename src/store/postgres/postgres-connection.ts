import type pg from 'pg';

import { closedStoreError, toQuotaError } from './postgres-errors.js';
import { connectionFault } from './postgres-pool.js';

/** One statement's `$n` values, in order. */
export type SqlValues = readonly unknown[];

/** A client inside a transaction opened by {@link PostgresConnection.transaction}. */
export interface TransactionClient {
  /** Rows of `text` with `values`. Errors propagate (the transaction rolls back). */
  rows<Row extends pg.QueryResultRow>(text: string, values: SqlValues): Promise<Row[]>;
  /** Runs a write and answers how many rows it changed. */
  run(text: string, values: SqlValues): Promise<number>;
}

/**
 * The pool shared by a store and all its tenant handles: single statements (prepared per
 * connection under a name that includes the schema), transactions, and the closed flag. Every
 * fault that leaves it is a `QuotaError` (translated by `postgres-errors.ts`): a refused or
 * broken connection is `STORE_UNAVAILABLE` for that call only, and the next call checks out a
 * fresh connection, so the store recovers when the server returns.
 */
export class PostgresConnection {
  readonly #pool: pg.Pool;
  readonly #schema: string;
  #closed = false;

  /** `schema` is the plain schema name, used to keep prepared-statement names apart. */
  constructor(pool: pg.Pool, schema: string) {
    this.#pool = pool;
    this.#schema = schema;
  }

  /** True once {@link close} ran. */
  get isClosed(): boolean {
    return this.#closed;
  }

  /**
   * Rows of one statement run on its own (autocommit: one statement, one transaction). With
   * `name`, the statement is prepared once per connection and reused, which saves its parse and
   * plan on every later call.
   */
  async rows<Row extends pg.QueryResultRow>(text: string, values: SqlValues, name?: string): Promise<Row[]> {
    if (this.#closed) throw closedStoreError();
    try {
      const config: pg.QueryConfig = { text, values: values as unknown[] };
      if (name !== undefined) config.name = `quotaplane/${name}/${this.#schema}`;
      const result = await this.#pool.query<Row>(config);
      return result.rows;
    } catch (error) {
      throw toQuotaError(this.#closed ? closedStoreError() : error);
    }
  }

  /** The first row of one statement, or `undefined`. */
  async row<Row extends pg.QueryResultRow>(text: string, values: SqlValues, name?: string): Promise<Row | undefined> {
    return (await this.rows<Row>(text, values, name))[0];
  }

  /** Runs one write statement on its own and answers how many rows it changed. */
  async run(text: string, values: SqlValues): Promise<number> {
    if (this.#closed) throw closedStoreError();
    try {
      const result = await this.#pool.query({ text, values: values as unknown[] });
      return result.rowCount ?? 0;
    } catch (error) {
      throw toQuotaError(this.#closed ? closedStoreError() : error);
    }
  }

  /**
   * Runs `body` in one READ COMMITTED transaction on one pooled connection. Returning commits;
   * throwing rolls back and rethrows as a `QuotaError`. A connection that failed mid-transaction
   * is destroyed rather than returned to the pool.
   */
  async transaction<T>(body: (client: TransactionClient) => Promise<T>): Promise<T> {
    if (this.#closed) throw closedStoreError();
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw toQuotaError(this.#closed ? closedStoreError() : error);
    }
    // The pool's own listener (createPool) keeps any error the connection reports, also one that
    // came before this borrower got the connection: such a connection is not used, and is destroyed.
    let broken: Error | undefined = connectionFault(client);
    try {
      if (broken !== undefined) throw broken;
      await client.query('BEGIN');
      const tx: TransactionClient = {
        rows: async <Row extends pg.QueryResultRow>(text: string, values: SqlValues) =>
          (await client.query<Row>({ text, values: values as unknown[] })).rows,
        run: async (text: string, values: SqlValues) =>
          (await client.query({ text, values: values as unknown[] })).rowCount ?? 0,
      };
      const result = await body(tx);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      broken ??= connectionFault(client);
      if (broken === undefined) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        }
      }
      throw toQuotaError(error);
    } finally {
      // Passing an error destroys the connection instead of pooling a socket in an unknown state.
      client.release(broken ?? connectionFault(client));
    }
  }

  /** Ends the pool; idempotent. Every later call throws `STORE_UNAVAILABLE`. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#pool.end();
    } catch (error) {
      throw toQuotaError(error);
    }
  }
}
