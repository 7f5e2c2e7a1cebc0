import { QuotaError } from '../../core/errors.js';

// SQLSTATE classes and codes whose meaning is "the server cannot answer now" (PostgreSQL manual,
// appendix A): the connection broke or was refused, the server is shutting down or starting,
// resources ran out, a lock or statement waited too long, a transaction lost a serialisation race,
// or a failover left us on a read-only standby. The caller fails closed and may retry.
const UNAVAILABLE_CLASSES = ['08', '53', '57', '58'];
const UNAVAILABLE_CODES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available (lock_timeout)
  '25006', // read_only_sql_transaction (a standby after failover)
  '28000', // invalid_authorization_specification
  '28P01', // invalid_password
  '3D000', // invalid_catalog_name: the database does not exist (yet)
]);

// The server says its own data cannot be trusted: never an answer, never retried.
const CORRUPT_CODES = new Set([
  'XX001', // data_corrupted
  'XX002', // index_corrupted
  '42P01', // undefined_table: our schema lost a table under us
  '42883', // undefined_function: our schema lost a decision function
  '3F000', // invalid_schema_name: our schema was dropped under us
]);

// Errors node-postgres raises without a SQLSTATE when the socket, the pool or a timeout failed.
const DRIVER_UNAVAILABLE_MESSAGE =
  /connection|terminated|timeout|timed out|not queryable|pool|socket|ECONN|EPIPE|ENOTFOUND|EHOSTUNREACH|EAI_AGAIN/i;

function sqlState(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : null;
}

function systemCode(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) ? code : null;
}

/**
 * Translates anything `pg` threw into the port's faults, in one place:
 * refused, reset or terminated connections, pool and statement timeouts, server shutdown, lock
 * timeouts and serialisation failures become `STORE_UNAVAILABLE` (callers
 * fail closed); corruption reported by the server, or a schema missing its tables or functions,
 * becomes `STORE_CORRUPT`; anything else is a bug (`INTERNAL`). The driver error is kept as
 * `cause` and its SQLSTATE (or system code) in `details.code`. A `QuotaError` passes through.
 */
export function toQuotaError(error: unknown): QuotaError {
  if (error instanceof QuotaError) return error;
  const text = error instanceof Error ? error.message : String(error);
  const state = sqlState(error);
  if (state !== null) {
    if (UNAVAILABLE_CODES.has(state) || UNAVAILABLE_CLASSES.includes(state.slice(0, 2))) {
      return unavailable(`SQLSTATE ${state}: ${text}`, state, error);
    }
    if (CORRUPT_CODES.has(state)) {
      return new QuotaError(
        'STORE_CORRUPT',
        `the PostgreSQL quota store cannot be trusted (SQLSTATE ${state}: ${text}); check the schema and ` +
          `restore it from a backup if tables or functions are missing`,
        { details: { backend: 'postgres', code: state }, cause: error },
      );
    }
    return new QuotaError('INTERNAL', `the PostgreSQL quota store failed unexpectedly (SQLSTATE ${state}: ${text})`, {
      details: { backend: 'postgres', code: state },
      cause: error,
    });
  }
  const system = systemCode(error);
  if (system !== null || DRIVER_UNAVAILABLE_MESSAGE.test(text)) {
    return unavailable(system === null ? text : `${system}: ${text}`, system, error);
  }
  return new QuotaError('INTERNAL', `the PostgreSQL quota store failed unexpectedly: ${text}`, {
    details: { backend: 'postgres' },
    cause: error,
  });
}

function unavailable(detail: string, code: string | null, cause: unknown): QuotaError {
  return new QuotaError(
    'STORE_UNAVAILABLE',
    `the PostgreSQL quota store could not answer (${detail}); nothing was decided, and a ceiling that yields ` +
      `under load is not a ceiling, so this is refused: retry when the database is reachable`,
    { details: { backend: 'postgres', ...(code === null ? {} : { code }) }, cause },
  );
}

/**
 * The fault every caller of a batch gets when the batch failed as a whole with a fault that is
 * not an unavailability already translated by the connection (a statement the server refused, so
 * none of it committed): each caller fails closed and may retry.
 * A batch whose reply never came fails with {@link outcomeUnknownError} instead.
 */
export function batchFailedError(cause: unknown): QuotaError {
  const translated = toQuotaError(cause);
  const code = typeof translated.details.code === 'string' ? translated.details.code : null;
  return unavailable(`a batch of decisions failed as a whole, so none of it committed: ${translated.message}`, code, cause);
}

/**
 * The fault of a decision sent to the server whose reply never came (a query timeout, a
 * connection lost or ended by the server while the statement ran): the server may have committed
 * it, and then it stands on the books although nobody was told. So it is `STORE_UNAVAILABLE` with
 * `details.outcome = 'unknown'`, the shape the SQLite store gives a COMMIT whose outcome it cannot
 * know (sqlite-connection.ts): not acknowledged, so not to be acted on, and not to be taken for
 * "nothing was decided" either. Its message says what to do: retry the same call with the same
 * payload, and the books answer it (an admission retried under its run id is told its pass, a
 * settle retried is answered from its receipt). `cause` is the driver's error.
 */
export function outcomeUnknownError(cause: unknown): QuotaError {
  const translated = toQuotaError(cause);
  const code = typeof translated.details.code === 'string' ? translated.details.code : null;
  const text = cause instanceof Error ? cause.message : String(cause);
  return new QuotaError(
    'STORE_UNAVAILABLE',
    `the PostgreSQL quota store sent this decision but its reply never came (${code === null ? text : `${code}: ${text}`}); ` +
      'the server may still have committed it, so it was not acknowledged and must not be acted on, yet it may stand: ' +
      'retry the same call with the same payload (an admission with the same run id, the same settle) and the books answer it',
    { details: { backend: 'postgres', step: 'commit', ...(code === null ? {} : { code }), outcome: 'unknown' }, cause },
  );
}

/**
 * The fault of a statement that commits a decision (a batch, a write, a transaction's `COMMIT`),
 * once it was handed to the connection: {@link outcomeUnknownError} unless the failure proves that
 * nothing committed, which only two kinds do: the server answered the statement with an `ERROR`
 * (its transaction is rolled back before the server answers; a `FATAL` or `PANIC` ends the session
 * and may come after the commit), or the driver refused to send it (a client that is not queryable).
 * Anything that is not an unavailability (a refusal raised by the function, a corrupt schema, a bug)
 * keeps its own translation.
 */
export function decisionFault(error: unknown): QuotaError {
  const fault = toQuotaError(error);
  if (fault.code !== 'STORE_UNAVAILABLE' || error instanceof QuotaError) return fault;
  if (answeredByServer(error) || neverSent(error)) return fault;
  return outcomeUnknownError(error);
}

// An error the server sent in answer to the statement, at severity ERROR (not FATAL or PANIC). A
// localised severity fails this test, which only costs precision: the fault is then "unknown".
function answeredByServer(error: unknown): boolean {
  return sqlState(error) !== null && (error as { severity?: unknown }).severity === 'ERROR';
}

// node-postgres refuses, before writing anything, a query on a client that broke or is ending.
function neverSent(error: unknown): boolean {
  return error instanceof Error && /is not queryable$/.test(error.message);
}

/** The fault of a call on a store after `close()` (store.ts `QuotaStore.close`). */
export function closedStoreError(): QuotaError {
  return new QuotaError(
    'STORE_UNAVAILABLE',
    'the PostgreSQL quota store is closed; open a new store with openStore() to continue',
    { details: { backend: 'postgres' } },
  );
}
