import pg from 'pg';

/** PostgreSQL type OIDs whose text form we parse ourselves. */
const INT8_OID = 20;

/**
 * BIGINT columns come back from `pg` as strings by default, because not every int8 fits a JS
 * number. Every int8 quotaplane stores is at most 2^53 − 1 (CHECK constraints;
 * docs/design/rules.md#p7), so they parse to numbers here, per pool and never globally (the host
 * app may rely on the default). A value outside the safe range parses to `NaN`, which every row
 * decoder rejects as `STORE_CORRUPT` instead of rounding it silently.
 */
function parseInt8(text: string): number {
  const value = Number(text);
  return Number.isSafeInteger(value) ? value : Number.NaN;
}

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return parseInt8;
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/** The last error each pooled connection reported (see {@link createPool}). */
const faults = new WeakMap<pg.ClientBase, Error>();

/**
 * The error a connection of a pool made by {@link createPool} reported since it connected, if
 * any: a connection with one is broken, and goes back to the pool with it (to be destroyed).
 */
export function connectionFault(client: pg.ClientBase): Error | undefined {
  return faults.get(client);
}

/** How the store's pool connects and how long anything may wait (all in milliseconds). */
export interface PoolSettings {
  readonly url: string;
  /** Connections in the pool; small, because admissions are short transactions. */
  readonly poolSize: number;
  /** How long a caller waits for a pooled connection or a lock before `STORE_UNAVAILABLE`. */
  readonly busyTimeoutMs: number;
  /** Server-side cap on one statement; the client gives up a little later if the server is gone silent. */
  readonly statementTimeoutMs: number;
}

/**
 * A `pg.Pool` set up for the store: int8 as numbers, `lock_timeout` and `statement_timeout` set
 * per connection, a client-side query timeout for a server that stopped answering without closing
 * the socket, TCP keep-alive, and an `error` listener so a broken idle connection never crashes
 * the process: the pool drops that client and opens a new one on the next checkout, which is how
 * the store recovers when the server comes back without being reopened (fail closed).
 * A checked-out connection always has a listener too (see the end of this function).
 */
export function createPool(settings: PoolSettings, onIdleError: (error: Error) => void): pg.Pool {
  const pool = new pg.Pool({
    connectionString: settings.url,
    max: settings.poolSize,
    connectionTimeoutMillis: settings.busyTimeoutMs,
    idleTimeoutMillis: 30_000,
    query_timeout: settings.statementTimeoutMs + 2_000,
    keepAlive: true,
    application_name: 'quotaplane',
    options: `-c lock_timeout=${settings.busyTimeoutMs} -c statement_timeout=${settings.statementTimeoutMs}`,
    types,
  });
  pool.on('error', onIdleError);
  // The pool listens for errors of idle connections only. A connection it hands out has no
  // listener until its borrower attaches one, after an await: when the server ends the connection
  // in that gap (a restart, pg_terminate_backend right after the connection was made), the 'error'
  // would go unheard and end the process. So every connection gets a listener of its own from its
  // first checkout, which keeps the error for connectionFault.
  pool.on('connect', (client) => {
    client.on('error', (error) => {
      faults.set(client, error);
    });
  });
  return pool;
}
