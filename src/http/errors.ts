import type { FastifyError } from 'fastify';

import { describe } from '../core/amounts.js';
import { QuotaError, type QuotaErrorCode } from '../core/errors.js';
import { escapeHidden } from '../core/identifiers.js';
import { unknownTenantDetails, unknownTenantMessage, unknownTenantOf } from '../core/known-tenant.js';
import { spentOutClearing } from '../core/spent-out-clearing.js';
import type { Refusal, RefusalCode, Refused } from '../core/refusal.js';
import type { CallRefusal } from '../core/call-refusal.js';

/*
 * The one error envelope of the HTTP service: RFC 9457 problem details
 * (`application/problem+json`) with a stable `code`, built here and nowhere else. One exhaustive
 * switch maps every code to its status (code-anchors, unkey `errors/http.ts`).
 */

/** The media type of every error reply. */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * Codes only the HTTP layer answers: no or an unknown key (401), a body over the size limit (413),
 * a body that is not JSON (415).
 */
export type HttpOnlyCode = 'UNAUTHENTICATED' | 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE';

/** Every `code` an error reply can carry: a refusal (of a run, a dispatch or a model call), a `QuotaError` code, or an HTTP-only code. */
export type ProblemCode = RefusalCode | CallRefusal['code'] | QuotaErrorCode | HttpOnlyCode;

/**
 * The status of each code:
 * - back-pressure refusals `TooManyRuns`, `SpentOut`, `RateLimited`: 429, with `Retry-After`
 *   (except a `SpentOut` whose hold alone exceeds the ceiling: 422, and one only the period's end
 *   clears: 429 or, when the service is so set, 403; see {@link refusalStatus});
 * - `Halted`: 423 (the operator's stop stands until lifted); `Withheld` too: a subject halt
 *   withdrew the authority the run acts on, and only a lift changes that;
 * - `Unbounded`, `UncountableRate`: 422 (the request is well formed but can never be counted as is);
 * - model calls (core/call-refusal.ts): `CallLimited` 429 with `Retry-After` until `retryAtMs`,
 *   `CallNeverFits` 422 (its worst case alone passes a ceiling);
 * - `INVALID_ARGUMENT`: 400, naming the field; `UNAUTHENTICATED`: 401; `NOT_FOUND`: 404, also for a
 *   tenant the key does not cover, so tenants cannot be discovered; `CONFLICT`: 409 (a settle retry
 *   with a different payload, a resume of a concluded run); `PAYLOAD_TOO_LARGE`: 413;
 *   `UNSUPPORTED_MEDIA_TYPE`: 415;
 * - `STORE_UNAVAILABLE`: 503 with `Retry-After` (nothing was decided; docs/design/decisions.md "Fail closed"),
 *   except with the member `outcome: 'unknown'`: the decision was sent and may stand, so retry the
 *   same call (under `run`, when the reply names one) and the books answer it;
 * - `STORE_CORRUPT`, `SCHEMA_TOO_NEW`, `STORE_MISCONFIGURED`, `INTERNAL`: 500 with a generic message, logged.
 */
export function statusOf(code: ProblemCode): number {
  switch (code) {
    case 'TooManyRuns':
    case 'SpentOut':
    case 'RateLimited':
    case 'CallLimited':
      return 429;
    case 'Halted':
    case 'Withheld':
      return 423;
    case 'Unbounded':
    case 'UncountableRate':
    case 'CallNeverFits':
      return 422;
    case 'INVALID_ARGUMENT':
      return 400;
    case 'UNAUTHENTICATED':
      return 401;
    case 'NOT_FOUND':
      return 404;
    case 'CONFLICT':
      return 409;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 415;
    case 'STORE_UNAVAILABLE':
      return 503;
    case 'STORE_CORRUPT':
    case 'SCHEMA_TOO_NEW':
    case 'STORE_MISCONFIGURED':
    case 'INTERNAL':
      return 500;
  }
}

const TITLES: Readonly<Record<ProblemCode, string>> = {
  TooManyRuns: 'Too many concurrent runs',
  SpentOut: 'Spend ceiling reached for this period',
  RateLimited: 'Rate ceiling reached',
  Halted: 'Halted by an operator',
  Withheld: 'Authority withdrawn by an operator',
  Unbounded: 'Run budget leaves a bounded unit open',
  UncountableRate: 'Rate ceiling cannot be counted',
  CallLimited: 'Model-call ceiling reached',
  CallNeverFits: 'Model call can never fit its ceiling',
  INVALID_ARGUMENT: 'Bad request',
  UNAUTHENTICATED: 'API key missing or not accepted',
  NOT_FOUND: 'Not found',
  CONFLICT: 'Conflict',
  PAYLOAD_TOO_LARGE: 'Request body too large',
  UNSUPPORTED_MEDIA_TYPE: 'Request body must be JSON',
  STORE_UNAVAILABLE: 'Quota store unavailable',
  STORE_CORRUPT: 'Internal error',
  SCHEMA_TOO_NEW: 'Internal error',
  STORE_MISCONFIGURED: 'Internal error',
  INTERNAL: 'Internal error',
};

/** The problem `title` of a code: a short phrase, the same for every reply of that code. */
export function problemTitle(code: ProblemCode): string {
  return TITLES[code];
}

/** Every `code` an error reply can carry, in the order of {@link statusOf}'s table (documented as an enum in /openapi.json). */
export const PROBLEM_CODES: readonly ProblemCode[] = Object.freeze(Object.keys(TITLES) as ProblemCode[]);

/** The sentence every 500 carries: nothing about the fault leaks; the log has it under the request id. */
export const GENERIC_INTERNAL_DETAIL =
  'quotaplane failed unexpectedly; nothing is known to have changed; the server logged this request id';

/** An RFC 9457 problem as the service sends it. Extension members hold the refusal's fields or `field`. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: ProblemCode;
  readonly requestId: string;
  readonly [member: string]: unknown;
}

/** A reply to send: the problem and its headers (`Retry-After` where one is known). */
export interface ProblemReply {
  readonly problem: Problem;
  readonly headers: Readonly<Record<string, string>>;
}

/** The members of the envelope itself; every other member of an error reply is an extension member. */
export const PROBLEM_MEMBERS: readonly string[] = Object.freeze(['type', 'title', 'status', 'detail', 'code', 'requestId', 'instance']);

/** The `type` URI of a code: a stable name (RFC 9457, section 3.1.1, allows a URI that is not dereferenced). */
export function problemType(code: ProblemCode): string {
  return `urn:quotaplane:problem:${code}`;
}

/**
 * `Retry-After` defaults (seconds) where the state does not say when to retry.
 * - `backPressureSeconds`: `TooManyRuns` (a slot frees when some run settles, which nobody can
 *   foresee) and `SpentOut` while held spend may still be given back; default 1.
 * - `unavailableSeconds`: a store that could not answer; default 2.
 */
export interface RetryAfterDefaults {
  readonly backPressureSeconds: number;
  readonly unavailableSeconds: number;
}

/** The defaults of {@link RetryAfterDefaults}: 1 s for back-pressure, 2 s for an unavailable store. */
export const DEFAULT_RETRY_AFTER: RetryAfterDefaults = Object.freeze({ backPressureSeconds: 1, unavailableSeconds: 2 });

/**
 * How the service answers a `SpentOut` that only the period's end clears
 * (docs/design/rules.md#d13): `429` (the default, as v1 was released) with `Retry-After` until the
 * period ends, which can be weeks; or `403`, with no `Retry-After`, which generic HTTP retry logic
 * neither sleeps on nor loops on. Both carry `retryAtMs`, the period's end. A `SpentOut` that held
 * spend may clear stays 429 with the short `Retry-After`, and one that can never fit stays 422.
 */
export type SpentOutStatus = 429 | 403;

/** The statuses {@link SpentOutStatus} may be, as `quotaplane serve --spent-out-status` accepts them. */
export const SPENT_OUT_STATUSES: readonly SpentOutStatus[] = Object.freeze([429, 403]);

/**
 * Seconds a refused caller should wait, or `null` when waiting does not help (422, 423):
 * - `RateLimited`: until `retryAtMs`, when enough counted dispatches have left every full window;
 * - `SpentOut` that clears at the period's end (core/spent-out-clearing.ts): until then, unless it
 *   is answered 403 (`spentOutStatus`), which carries no `Retry-After`;
 * - other `SpentOut` (held spend may come back) and `TooManyRuns`: the short default;
 * - a `SpentOut` that never fits: none.
 * `decidedAtMs` is the instant the refusal was decided at (the request's `atMs`, else the server
 * clock). Never less than 1 s, so a caller cannot spin on an answer of 0.
 */
export function retryAfterSeconds(refusal: Refusal, decidedAtMs: number, defaults: RetryAfterDefaults, spentOutStatus: SpentOutStatus = 429): number | null {
  switch (refusal.code) {
    case 'RateLimited':
      return secondsUntil(refusal.retryAtMs, decidedAtMs);
    case 'SpentOut': {
      const clearing = spentOutClearing(refusal);
      if (clearing.when === 'never') return null;
      if (clearing.when === 'period-end') return spentOutStatus === 403 ? null : secondsUntil(clearing.atMs, decidedAtMs);
      return defaults.backPressureSeconds;
    }
    case 'TooManyRuns':
      return defaults.backPressureSeconds;
    case 'Halted':
    case 'Withheld':
    case 'Unbounded':
    case 'UncountableRate':
      return null;
  }
}

/**
 * The status of a refusal: {@link statusOf} its code, except a `SpentOut` that can never fit
 * (its hold alone exceeds the period's ceiling), which answers 422: retrying can never succeed,
 * only a smaller budget or a higher ceiling can; and a `SpentOut` that only the period's end
 * clears, which answers `spentOutStatus` (default 429). The code stays `SpentOut` either way.
 */
export function refusalStatus(refusal: Refusal, spentOutStatus: SpentOutStatus = 429): number {
  if (refusal.code !== 'SpentOut') return statusOf(refusal.code);
  const clearing = spentOutClearing(refusal);
  if (clearing.when === 'never') return 422;
  return clearing.when === 'period-end' ? spentOutStatus : statusOf(refusal.code);
}

// The detail of a never-fitting SpentOut says why waiting is useless and what to change.
function refusalDetail(refused: Refused): string {
  const { refusal } = refused;
  if (refusal.code !== 'SpentOut' || spentOutClearing(refusal).when !== 'never') return refused.message;
  return (
    `tenant '${refusal.tenant}' cannot reserve ${refusal.requested} ${refusal.unit} in period ${refusal.period}: ` +
    `the run's hold alone exceeds the ${refusal.bound === 'agent' ? `ceiling of agent '${refusal.agent ?? ''}'` : "tenant's ceiling"} of ${refusal.limit} ${refusal.unit}, so it can never fit; ` +
    `lower the run's budget or raise the ceiling`
  );
}

// A SpentOut that clears at its period's end says when, as RateLimited does: `retryAtMs`.
function retryMembers(refusal: Refusal): { retryAtMs?: number } {
  if (refusal.code !== 'SpentOut') return {};
  const clearing = spentOutClearing(refusal);
  return clearing.when === 'period-end' ? { retryAtMs: clearing.atMs } : {};
}

/** Seconds from `nowMs` until `atMs`, rounded up, never less than 1 (a `Retry-After` a caller cannot spin on). */
export function secondsUntil(atMs: number, nowMs: number): number {
  return Math.max(1, Math.ceil((atMs - nowMs) / 1000));
}

/**
 * The reply for a refusal value: its status, `detail` = the refusal's message, and its fields; a
 * `SpentOut` that clears at its period's end adds `retryAtMs` (docs/design/rules.md#d13).
 */
export function refusalProblem(
  refused: Refused,
  requestId: string,
  decidedAtMs: number,
  defaults: RetryAfterDefaults,
  spentOutStatus: SpentOutStatus = 429,
): ProblemReply {
  const { refusal } = refused;
  const retryAfter = retryAfterSeconds(refusal, decidedAtMs, defaults, spentOutStatus);
  return {
    problem: {
      type: problemType(refusal.code),
      title: TITLES[refusal.code],
      status: refusalStatus(refusal, spentOutStatus),
      detail: refusalDetail(refused),
      ...refusal,
      ...retryMembers(refusal),
      code: refusal.code,
      requestId,
    },
    headers: retryAfter === null ? {} : { 'retry-after': String(retryAfter) },
  };
}

/**
 * A fault raised inside the HTTP layer itself (no key, a tenant the key does not cover, a field
 * the schema refused): carries its code, a detail sentence and extension members.
 */
export class HttpProblem extends Error {
  override readonly name = 'HttpProblem';
  readonly code: ProblemCode;
  readonly members: Readonly<Record<string, unknown>>;

  constructor(code: ProblemCode, detail: string, members: Record<string, unknown> = {}) {
    super(detail);
    this.code = code;
    this.members = Object.freeze({ ...members });
  }
}

/** The 404 for anything a key may not see: the same answer whether or not the tenant exists. */
export function notFoundProblem(): HttpProblem {
  return new HttpProblem('NOT_FOUND', 'nothing here for this API key; check the path, the tenant and the key');
}

/** A 400 naming `field`. */
export function badInput(field: string, message: string): HttpProblem {
  return new HttpProblem('INVALID_ARGUMENT', `${field}: ${message}`, { field });
}

/** What {@link errorProblem} needs besides the error. */
export interface ErrorContext {
  readonly requestId: string;
  readonly retryAfter: RetryAfterDefaults;
  /** Called for every 500, with the error, so it is logged under the request id. */
  readonly logInternal: (error: unknown) => void;
  /** The largest body the route accepts, bytes: a 413 names it in its detail and its `limit` member. */
  readonly bodyLimitBytes?: number | undefined;
  /**
   * Whether the caller's key covers a tenant: a 404 for a tenant that does not exist suggests the
   * nearest known tenant only when the key covers it, so tenants cannot be discovered. Absent: no
   * suggestion is shown.
   */
  readonly covers?: ((tenant: string) => boolean) | undefined;
}

/** How an HTTP caller says a tenant is new (docs/design/rules.md#l95): the query member of the routes that may create one. */
export const HTTP_NEW_TENANT_HINT = 'repeat the request with ?newTenant=true';

/**
 * The reply for anything thrown while serving a request: an {@link HttpProblem}; a `QuotaError`
 * (its code decides the status; `INVALID_ARGUMENT` keeps its `field`; a `NOT_FOUND` for a tenant
 * that does not exist keeps `field`, `tenant`, `act` and a `suggestion` the key covers, and says
 * `?newTenant=true`); a Fastify error (schema validation → 400 naming the field, body too large →
 * 413 naming `body` and the `limit` in bytes, not JSON → 415, unreadable JSON → 400);
 * anything else → 500 with {@link GENERIC_INTERNAL_DETAIL}, logged.
 */
export function errorProblem(error: unknown, context: ErrorContext): ProblemReply {
  if (error instanceof HttpProblem) return envelope(error.code, error.message, error.members, context);
  if (error instanceof QuotaError) {
    const unknown = unknownTenantOf(error);
    if (unknown !== null) {
      // Said the HTTP way, and suggesting only a tenant the key covers.
      const shown = unknown.suggestion !== null && context.covers?.(unknown.suggestion) === true ? unknown : { ...unknown, suggestion: null };
      return envelope('NOT_FOUND', unknownTenantMessage(shown, HTTP_NEW_TENANT_HINT), unknownTenantDetails(shown), context);
    }
    return envelope(error.code, error.message, errorMembers(error), context, error);
  }
  const fastify = asFastifyError(error);
  if (fastify !== null) {
    if (fastify.validation !== undefined) {
      const { field, message } = validationField(fastify);
      return envelope('INVALID_ARGUMENT', `${field}: ${message}`, { field }, context);
    }
    if (fastify.code === 'FST_ERR_MAX_PARAM_LENGTH') {
      return envelope('INVALID_ARGUMENT', 'path: a path parameter is longer than any identifier (200 characters, percent-encoded)', { field: 'path' }, context);
    }
    if (fastify.code === 'FST_ERR_BAD_URL') {
      return envelope('INVALID_ARGUMENT', 'path: is not a valid URL path (check its percent-encoding)', { field: 'path' }, context);
    }
    if (fastify.statusCode === 413) return tooLarge(context);
    if (fastify.statusCode === 415) {
      return envelope('UNSUPPORTED_MEDIA_TYPE', 'body: send JSON with content-type application/json', { field: 'body' }, context);
    }
    if (fastify.statusCode !== undefined && fastify.statusCode >= 400 && fastify.statusCode < 500) {
      return envelope('INVALID_ARGUMENT', `body: ${fastify.message}`, { field: 'body' }, context);
    }
  }
  return envelope('INTERNAL', GENERIC_INTERNAL_DETAIL, {}, context, error);
}

// The 413 of a body over the limit, naming the limit in bytes (`limit`) when the context knows it.
function tooLarge(context: ErrorContext): ProblemReply {
  const limit = context.bodyLimitBytes;
  if (limit === undefined) return envelope('PAYLOAD_TOO_LARGE', 'body: is larger than this server accepts; send a smaller body', { field: 'body' }, context);
  return envelope(
    'PAYLOAD_TOO_LARGE',
    `body: is larger than this server's limit of ${limit} bytes; send a smaller body (the limit is serve's --body-limit-bytes)`,
    { field: 'body', limit },
    context,
  );
}

// The facts of a QuotaError a caller can act on, as problem members: `field` of bad input (and of
// a NOT_FOUND or CONFLICT that names one); of a
// `STORE_UNAVAILABLE` whose decision may stand, `outcome: 'unknown'` and the `run` to retry under;
// and of a `CONFLICT` what it is about (`fields` that differ from the admitted request, the run's
// `runStatus` — its `details.status`, renamed so it cannot be taken for the HTTP status —
// `latestEpoch`, `epoch`, `pruned`). Nothing else of `details` leaves the server.
function errorMembers(error: QuotaError): Record<string, unknown> {
  const d = error.details;
  if (error.code === 'INVALID_ARGUMENT') return typeof d.field === 'string' ? { field: d.field } : {};
  if (error.code === 'STORE_UNAVAILABLE') {
    if (d.outcome !== 'unknown') return {};
    return typeof d.run === 'string' ? { outcome: 'unknown', run: d.run } : { outcome: 'unknown' };
  }
  // A NOT_FOUND or CONFLICT that names the field it is about (a model call's `callId`) keeps it.
  const named = typeof d.field === 'string' ? { field: d.field } : {};
  if (error.code === 'NOT_FOUND') return named;
  if (error.code !== 'CONFLICT') return {};
  const members: Record<string, unknown> = { ...named };
  if (typeof d.run === 'string') members.run = d.run;
  if (Array.isArray(d.fields) && d.fields.every((f) => typeof f === 'string')) members.fields = d.fields;
  if (typeof d.status === 'string') members.runStatus = d.status;
  for (const name of ['epoch', 'latestEpoch'] as const) if (typeof d[name] === 'number') members[name] = d[name];
  if (d.pruned === true) members.pruned = true;
  return members;
}

function envelope(
  code: ProblemCode,
  detail: string,
  members: Readonly<Record<string, unknown>>,
  context: ErrorContext,
  cause?: unknown,
): ProblemReply {
  const status = statusOf(code);
  if (status >= 500 && status !== 503) context.logInternal(cause ?? new Error(detail));
  return {
    problem: {
      type: problemType(code),
      title: TITLES[code],
      status,
      detail: status >= 500 && status !== 503 ? GENERIC_INTERNAL_DETAIL : detail,
      ...members,
      code,
      requestId: context.requestId,
    },
    headers:
      status === 503
        ? { 'retry-after': String(context.retryAfter.unavailableSeconds) }
        : status === 401
          ? { 'www-authenticate': 'Bearer realm="quotaplane"' }
          : {},
  };
}

function asFastifyError(error: unknown): FastifyError | null {
  if (typeof error !== 'object' || error === null) return null;
  const candidate = error as Partial<FastifyError>;
  return typeof candidate.code === 'string' && candidate.code.startsWith('FST_') ? (candidate as FastifyError) : null;
}

interface AjvIssue {
  readonly keyword: string;
  readonly instancePath: string;
  readonly params: Record<string, unknown>;
  readonly message?: string;
  /** The value that failed and the schema it failed (Ajv's `verbose` mode, which validation.ts sets). */
  readonly data?: unknown;
  readonly parentSchema?: { readonly description?: unknown };
}

const CONTEXT_FIELD: Readonly<Record<string, string>> = { body: 'body', querystring: 'query', params: 'path', headers: 'headers' };

/**
 * The field a schema validation error names, spelled as the plane spells fields (`budget.maxTokens`,
 * `chain[2]`), and what is wrong with it. Query and path members are named bare (`period`, `tenant`).
 */
export function validationField(error: FastifyError): { field: string; message: string } {
  const issues = (error.validation ?? []) as readonly AjvIssue[];
  const issue = issues[0] ?? { keyword: '', instancePath: '', params: {} };
  const segments = issue.instancePath.split('/').slice(1).map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  let message = issue.message ?? 'is not valid';
  if (issue.keyword === 'additionalProperties' && typeof issue.params.additionalProperty === 'string') {
    segments.push(issue.params.additionalProperty);
    message = 'is not a member of this request; remove it';
  } else if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') {
    segments.push(issue.params.missingProperty);
    message = 'is required';
  } else if (GOT_KEYWORDS.has(issue.keyword)) {
    message = `${allowedText(issues, issue) ?? message}${'data' in issue ? `; got ${shown(issue.data)}` : ''}`;
  }
  const field = segments.reduce(
    (path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : path === '' ? segment : `${path}.${segment}`),
    '',
  );
  return { field: field === '' ? (CONTEXT_FIELD[error.validationContext ?? 'body'] ?? 'body') : field, message };
}

// The keywords whose 400 says what was sent: their own messages do not (the identifier keyword's does).
const GOT_KEYWORDS: ReadonlySet<string> = new Set(['const', 'enum', 'pattern', 'minimum', 'maximum', 'type', 'multipleOf', 'minLength', 'maxLength']);

// A value as a message shows it: as `describe` does, with hidden characters escaped.
function shown(value: unknown): string {
  return escapeHidden(describe(value));
}

// What a value must be, in words, where Ajv's own message would not say: the choices of a union of
// literals (one `const` issue per branch at the same path) or an enum, the description of a
// pattern's schema, and bounds as words. Null when Ajv's message says it already.
function allowedText(issues: readonly AjvIssue[], first: AjvIssue): string | null {
  if (first.keyword === 'const' || first.keyword === 'enum') {
    const choices = issues
      .filter((each) => each.instancePath === first.instancePath)
      .flatMap((each) => (each.keyword === 'const' ? [each.params.allowedValue] : each.keyword === 'enum' && Array.isArray(each.params.allowedValues) ? each.params.allowedValues : []));
    return `must be ${choices.length === 1 ? '' : 'one of '}${choices.map((choice) => JSON.stringify(choice)).join(', ')}`;
  }
  if (first.keyword === 'pattern' && typeof first.parentSchema?.description === 'string') return `must be ${first.parentSchema.description}`;
  if ((first.keyword === 'minimum' || first.keyword === 'maximum') && typeof first.params.limit === 'number') {
    return `must be ${first.keyword === 'minimum' ? 'at least' : 'at most'} ${first.params.limit}`;
  }
  return null;
}
