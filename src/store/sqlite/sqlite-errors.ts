import { QuotaError } from '../../core/errors.js';

// Result codes (better-sqlite3 reports the extended name, e.g. SQLITE_BUSY_SNAPSHOT, SQLITE_IOERR_FSYNC)
// whose meaning is "this store cannot answer now": the caller fails closed and may retry.
const UNAVAILABLE_PREFIXES = [
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
  'SQLITE_PROTOCOL',
  'SQLITE_NOMEM',
  'SQLITE_INTERRUPT',
  'SQLITE_NOLFS',
  'SQLITE_AUTH',
  'SQLITE_PERM',
];

// Result codes that mean the file itself cannot be trusted: never an answer, never retried.
const CORRUPT_PREFIXES = ['SQLITE_CORRUPT', 'SQLITE_NOTADB'];

function sqliteCode(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : null;
}

/** True for SQLITE_BUSY and its extended codes: another connection holds the lock just now. */
export function isSqliteBusy(error: unknown): boolean {
  return sqliteCode(error)?.startsWith('SQLITE_BUSY') ?? false;
}

/** True for SQLITE_FULL and SQLITE_IOERR and their extended codes: the disk is full or failing. */
export function isSqliteStorageFault(error: unknown): boolean {
  return (sqliteCode(error)?.startsWith('SQLITE_FULL') ?? false) || isSqliteIoError(error);
}

/** True for SQLITE_IOERR and its extended codes (SQLITE_IOERR_FSYNC, SQLITE_IOERR_SHMSIZE, …). */
export function isSqliteIoError(error: unknown): boolean {
  return sqliteCode(error)?.startsWith('SQLITE_IOERR') ?? false;
}

/**
 * Translates anything the SQLite driver threw into the port's faults, in one place: busy or locked
 * databases, I/O and open failures, and a closed connection become `STORE_UNAVAILABLE` (callers
 * fail closed); a corrupt or foreign file becomes `STORE_CORRUPT`; anything else is a bug
 * (`INTERNAL`). The driver error is kept as `cause`. A `QuotaError` passes through unchanged.
 */
export function toQuotaError(error: unknown): QuotaError {
  if (error instanceof QuotaError) return error;
  const code = sqliteCode(error);
  const text = error instanceof Error ? error.message : String(error);
  if (code !== null && UNAVAILABLE_PREFIXES.some((prefix) => code.startsWith(prefix))) {
    return new QuotaError('STORE_UNAVAILABLE', `the SQLite quota store could not answer (${code}: ${text}); ${unavailableAdvice(code)}`, {
      details: { backend: 'sqlite', code },
      cause: error,
    });
  }
  if (code !== null && CORRUPT_PREFIXES.some((prefix) => code.startsWith(prefix))) {
    return new QuotaError(
      'STORE_CORRUPT',
      `the SQLite quota store's file cannot be read (${code}: ${text}); restore it from a backup`,
      { details: { backend: 'sqlite', code }, cause: error },
    );
  }
  // better-sqlite3 throws a TypeError once its connection is closed underneath a statement.
  if (error instanceof TypeError && /database connection is not open/i.test(text)) {
    return closedStoreError(error);
  }
  // …and a TypeError, not SQLITE_CANTOPEN, when the file's directory does not exist.
  if (error instanceof TypeError && /cannot open database/i.test(text)) {
    return new QuotaError('STORE_UNAVAILABLE', `the SQLite quota store cannot be opened: ${text}; check the path`, {
      details: { backend: 'sqlite' },
      cause: error,
    });
  }
  return new QuotaError('INTERNAL', `the SQLite quota store failed unexpectedly: ${text}`, {
    details: { backend: 'sqlite', ...(code === null ? {} : { code }) },
    cause: error,
  });
}

// What an operator reads after the driver's words: a full disk and a failing one are not fixed by
// waiting alone, so they say where to look.
function unavailableAdvice(code: string): string {
  if (code.startsWith('SQLITE_FULL')) {
    return 'the disk holding its file is full, so nothing was decided; free space on that disk and retry (the same store writes again once there is room)';
  }
  if (code.startsWith('SQLITE_IOERR')) {
    return 'reading or writing its files failed, so nothing was decided; check the disk holding its file (a full disk is the usual cause, a failing one the other) and retry';
  }
  return 'nothing was decided, retry later';
}

/** The fault of a call on a store after `close()` (store.ts `QuotaStore.close`). */
export function closedStoreError(cause?: unknown): QuotaError {
  return new QuotaError(
    'STORE_UNAVAILABLE',
    'the SQLite quota store is closed; open a new store with openStore() to continue',
    { details: { backend: 'sqlite' }, ...(cause === undefined ? {} : { cause }) },
  );
}
