/**
 * The one exception type quotaplane throws. Refusals ("not now", "stop") are values, never
 * exceptions (docs/design/decisions.md "Refusals are values, faults are exceptions"); a
 * `QuotaError` is a fault: bad input, a store that cannot answer, a store whose rows cannot be
 * trusted, or a settle retry that disagrees with its receipt.
 */

/**
 * Closed set of fault codes.
 * - `INVALID_ARGUMENT`: a caller passed a value outside the documented shape; `details.field` names it.
 * - `CONFLICT`: the request contradicts the books, e.g. a pass settled twice with different
 *   payloads (docs/design/rules.md#c7); nothing changed.
 * - `NOT_FOUND`: the named run or pass does not exist for this tenant.
 * - `STORE_UNAVAILABLE`: the store could not answer; callers fail closed (docs/design/decisions.md
 *   "Fail closed"). Nothing was decided, unless `details.outcome` is `'unknown'`: the decision was
 *   sent and may stand (its commit could not be confirmed), and retrying the same call learns it
 *   from the books.
 * - `STORE_CORRUPT`: a stored row cannot be read; it is never skipped (docs/design/rules.md, rule 7
 *   of "The rules in short").
 * - `SCHEMA_TOO_NEW`: the database was migrated by a newer quotaplane than this one.
 * - `STORE_MISCONFIGURED`: the store named cannot be used as configured, and waiting will not help
 *   (docs/reference/errors.md): a wrong password, a database, schema or file that does not exist,
 *   no quotaplane store where one was named (another application's database, an empty file), a path
 *   that cannot be created or written, or a store an older quotaplane wrote that needs
 *   `quotaplane migrate`. `details.reason` names which; the message names what (never a secret).
 * - `INTERNAL`: a bug.
 */
export type QuotaErrorCode =
  | 'INVALID_ARGUMENT'
  | 'CONFLICT'
  | 'NOT_FOUND'
  | 'STORE_UNAVAILABLE'
  | 'STORE_CORRUPT'
  | 'SCHEMA_TOO_NEW'
  | 'STORE_MISCONFIGURED'
  | 'INTERNAL';

/** A fault raised by quotaplane. `retryable` is true only for `STORE_UNAVAILABLE`. */
export class QuotaError extends Error {
  override readonly name = 'QuotaError';
  readonly code: QuotaErrorCode;
  readonly details: Readonly<Record<string, unknown>>;
  readonly retryable: boolean;

  constructor(
    code: QuotaErrorCode,
    message: string,
    options: { details?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.details = Object.freeze({ ...(options.details ?? {}) });
    this.retryable = code === 'STORE_UNAVAILABLE';
  }
}

/** Builds an `INVALID_ARGUMENT` error whose `details.field` names the offending field. */
export function invalidArgument(field: string, message: string): QuotaError {
  return new QuotaError('INVALID_ARGUMENT', `${field}: ${message}`, { details: { field } });
}

/** True when `error` is a {@link QuotaError} with the given code. */
export function isQuotaError(error: unknown, code?: QuotaErrorCode): error is QuotaError {
  return error instanceof QuotaError && (code === undefined || error.code === code);
}
