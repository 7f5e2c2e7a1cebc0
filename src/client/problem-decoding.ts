import { QuotaError, type QuotaErrorCode } from '../core/errors.js';
import type { CallRefusal } from '../core/call-refusal.js';
import type { Refusal, RefusalCode, Refused } from '../core/refusal.js';

/** The refusal codes a server can answer as values (core/refusal.ts, and a model call's, core/call-refusal.ts). */
const REFUSAL_CODES: ReadonlySet<string> = new Set<RefusalCode | CallRefusal['code']>([
  'TooManyRuns',
  'SpentOut',
  'Unbounded',
  'Halted',
  'RateLimited',
  'UncountableRate',
  'Withheld',
  'CallLimited',
  'CallNeverFits',
]);

const QUOTA_ERROR_CODES: ReadonlySet<string> = new Set<QuotaErrorCode>([
  'INVALID_ARGUMENT',
  'CONFLICT',
  'NOT_FOUND',
  'STORE_UNAVAILABLE',
  'STORE_CORRUPT',
  'SCHEMA_TOO_NEW',
  'STORE_MISCONFIGURED',
  'INTERNAL',
]);

// The envelope's own members (http/errors.ts PROBLEM_MEMBERS); every other member of a refusal's
// problem is one of the refusal's fields.
const ENVELOPE = new Set(['type', 'title', 'status', 'detail', 'code', 'requestId', 'instance']);

/** What a failed reply decodes to: a refusal value to return, or a fault to throw. */
export type DecodedProblem = { readonly kind: 'refused'; readonly refused: Refused } | { readonly kind: 'fault'; readonly error: QuotaError };

/**
 * Decodes an error reply of the HTTP service into what the plane would have answered: a
 * refusal problem becomes the same `{ ok: false, refusal, message }` value (`message` is
 * the problem's `detail`, the refusal fields its extension members; a model call's refusal,
 * `CallLimited` or `CallNeverFits`, decodes the same way, typed as a `Refusal` here and narrowed by
 * the client's `reserveCall`); any other problem becomes the
 * `QuotaError` the plane would throw, with the problem's members (`field`, `requestId`, the HTTP
 * `status`) in `details`. HTTP-only codes map onto the plane's: 401 → `INVALID_ARGUMENT` on field
 * `key`, 413 → `INVALID_ARGUMENT` on `body` (with the server's `limit` in bytes in `details.limit`), 415 →
 * `INTERNAL` (the client sent something it should not).
 * A reply that is not a problem document becomes a fault by its status: 502, 503 and 504 →
 * `STORE_UNAVAILABLE` (a proxy in front of the server), anything else → `INTERNAL`.
 */
export function decodeProblem(status: number, body: unknown): DecodedProblem {
  const problem = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  const code = problem !== null && typeof problem.code === 'string' ? problem.code : null;
  if (problem === null || code === null) {
    const text = `the quotaplane server answered HTTP ${status} without a problem document`;
    const fallback: QuotaErrorCode = status === 502 || status === 503 || status === 504 ? 'STORE_UNAVAILABLE' : 'INTERNAL';
    return { kind: 'fault', error: new QuotaError(fallback, `${text}; retry later or check the server's log`, { details: { status } }) };
  }
  const detail = typeof problem.detail === 'string' ? problem.detail : `HTTP ${status}`;
  const members = Object.fromEntries(Object.entries(problem).filter(([name]) => !ENVELOPE.has(name)));
  if (REFUSAL_CODES.has(code)) {
    return { kind: 'refused', refused: { ok: false, refusal: { code, ...members } as unknown as Refusal, message: detail } };
  }
  const details = { ...members, status, ...(typeof problem.requestId === 'string' ? { requestId: problem.requestId } : {}) };
  if (QUOTA_ERROR_CODES.has(code)) return { kind: 'fault', error: new QuotaError(code as QuotaErrorCode, detail, { details }) };
  switch (code) {
    case 'UNAUTHENTICATED':
      return { kind: 'fault', error: new QuotaError('INVALID_ARGUMENT', `key: ${detail}`, { details: { ...details, field: 'key' } }) };
    case 'PAYLOAD_TOO_LARGE':
      return { kind: 'fault', error: new QuotaError('INVALID_ARGUMENT', detail, { details: { ...details, field: 'body' } }) };
    default:
      return { kind: 'fault', error: new QuotaError('INTERNAL', `the quotaplane server answered ${code}: ${detail}`, { details }) };
  }
}
