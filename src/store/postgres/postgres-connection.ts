import type pg from 'pg';

import { closedStoreError, decisionFault, toQuotaError } from './postgres-errors.js';
import { connectionFault } from './postgres-pool.js';

/** One statement's `$n` values, in order. */
export type SqlValues = readonly unknown[];

/** A client inside a transaction opened by {@link PostgresConnection.transaction}. */
export interface TransactionClient {
  /** Rows of `text` with `values`. Errors propagate (the transaction rolls back). */
  rows<Row extends pg.QueryResultRow>(text: string, values: SqlValues): Promise<Row[]>;
  /** Runs a write and answers how many rows it changed. */
  run(text: string, values: SqlValues): Promise<number>;
  /**
   * Only in a transaction opened with `deferBegin`, and then first: sends `BEGIN` and `text` in one
   * round trip, `$1` in `text` standing for `value` as an escaped string literal; answers its rows.
   */
  readonly opening?: <Row extends pg.QueryResultRow>(text: string, value: string) => Promise<Row[]>;
  /**
   * Only in a transaction opened with `deferBegin`, and then last: sends `text` and `COMMIT` in one
   * round trip (`$1` as in `opening`); answers the rows of `text`. A reply that never comes leaves
   * the outcome unknown, as a COMMIT's does.
   */
  readonly closing?: <Row extends pg.QueryResultRow>(text: string, value: string) => Promise<Row[]>;
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

  /**
   * Rows of one statement that commits a decision on its own (autocommit), named as in
   * {@link rows}. A failure before the statement was handed to a connection (no connection could
   * be had) is `STORE_UNAVAILABLE`, nothing decided; once it was handed over, a failure that does
   * not prove the server rolled it back (a query timeout, a connection lost or ended mid-statement)
   * is `STORE_UNAVAILABLE` with `details.outcome = 'unknown'` (postgres-errors.ts `decisionFault`).
   */
  async decide<Row extends pg.QueryResultRow>(text: string, values: SqlValues, name?: string): Promise<Row[]> {
    const config: pg.QueryConfig = { text, values: values as unknown[] };
    if (name !== undefined) config.name = `quotaplane/${name}/${this.#schema}`;
    return (await this.#decide<Row>(config)).rows;
  }

  /** The first row of one statement, or `undefined`. */
  async row<Row extends pg.QueryResultRow>(text: string, values: SqlValues, name?: string): Promise<Row | undefined> {
    return (await this.rows<Row>(text, values, name))[0];
  }

  /** Runs one write statement on its own and answers how many rows it changed; faults as {@link decide}'s. */
  async run(text: string, values: SqlValues): Promise<number> {
    return (await this.#decide({ text, values: values as unknown[] })).rowCount ?? 0;
  }

  // One statement that commits, on a connection checked out here rather than by `pool.query`, so
  // that a failure to get a connection (nothing sent) is told apart from a failure after the
  // statement was handed over (see decide). The connection goes back as `pool.query` returns it:
  // destroyed after any error.
  async #decide<Row extends pg.QueryResultRow>(config: pg.QueryConfig): Promise<pg.QueryResult<Row>> {
    const client = await this.#checkout();
    const broken = connectionFault(client);
    if (broken !== undefined) {
      client.release(broken);
      throw toQuotaError(broken);
    }
    try {
      const result = await client.query<Row>(config);
      client.release(connectionFault(client));
      return result;
    } catch (error) {
      client.release(error instanceof Error ? error : new Error(String(error)));
      throw decisionFault(error);
    }
  }

  // A pooled connection; failing to get one is `STORE_UNAVAILABLE` with nothing sent.
  async #checkout(): Promise<pg.PoolClient> {
    if (this.#closed) throw closedStoreError();
    try {
      return await this.#pool.connect();
    } catch (error) {
      throw toQuotaError(this.#closed ? closedStoreError() : error);
    }
  }

  /**
   * Runs `body` in one READ COMMITTED transaction on one pooled connection. Returning commits;
   * throwing rolls back and rethrows as a `QuotaError`. A connection that failed mid-transaction
   * is destroyed rather than returned to the pool. A fault before the `COMMIT` was sent decided
   * nothing (the server rolls back a transaction whose connection ends); a `COMMIT` whose reply
   * never came is `STORE_UNAVAILABLE` with `details.outcome = 'unknown'`, as in {@link decide}.
   */
  async transaction<T>(body: (client: TransactionClient) => Promise<T>, options: { readonly deferBegin?: boolean } = {}): Promise<T> {
    const client = await this.#checkout();
    let committing = false;
    let begun = options.deferBegin !== true;
    let committed = false;
    // The pool's own listener (createPool) keeps any error the connection reports, also one that
    // came before this borrower got the connection: such a connection is not used, and is destroyed.
    let broken: Error | undefined = connectionFault(client);
    try {
      if (broken !== undefined) throw broken;
      if (begun) await client.query('BEGIN');
      // A simple query of several statements answers one result per statement.
      const simple = async (text: string): Promise<pg.QueryResult[]> => {
        const results = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[];
        return Array.isArray(results) ? results : [results];
      };
      const tx: TransactionClient = {
        rows: async <Row extends pg.QueryResultRow>(text: string, values: SqlValues) =>
          (await client.query<Row>({ text, values: values as unknown[] })).rows,
        run: async (text: string, values: SqlValues) =>
          (await client.query({ text, values: values as unknown[] })).rowCount ?? 0,
      };
      // A function, not a string: a replacement string would read `$'`, `$&`… of the value as patterns.
      const literal = (text: string, value: string): string => text.replace('$1', () => client.escapeLiteral(value));
      if (!begun) {
        Object.assign(tx, {
          opening: async <Row extends pg.QueryResultRow>(text: string, value: string): Promise<Row[]> => {
            begun = true;
            const results = await simple(`BEGIN; ${literal(text, value)}`);
            return (results.at(-1)?.rows ?? []) as Row[];
          },
          closing: async <Row extends pg.QueryResultRow>(text: string, value: string): Promise<Row[]> => {
            committing = true;
            const results = await simple(`${literal(text, value)}; COMMIT`);
            committed = true;
            return (results[0]?.rows ?? []) as Row[];
          },
        });
      }
      const result = await body(tx);
      if (begun && !committed) {
        committing = true;
        await client.query('COMMIT');
      }
      return result;
    } catch (error) {
      const fault = committing ? decisionFault(error) : toQuotaError(error);
      // A COMMIT without an answer leaves nothing to roll back here: the connection is dropped.
      if (fault.details.outcome === 'unknown') broken ??= error instanceof Error ? error : new Error(String(error));
      broken ??= connectionFault(client);
      if (broken === undefined && begun && !committed) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        }
      }
      throw fault;
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
