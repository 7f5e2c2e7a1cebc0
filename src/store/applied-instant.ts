import { describe } from '../core/amounts.js';
import { invalidArgument, QuotaError } from '../core/errors.js';
import { requireInstantMs } from '../core/instant.js';
import type { AppliedInstant } from './types.js';

/** The most a decision may wait to be applied, ms, when the plane's options name no other: 2 000. */
export const DEFAULT_MAX_DECISION_WAIT_MS = 2_000;

/** The largest `maxDecisionWaitMs` accepted, ms (one hour). */
export const MAX_DECISION_WAIT_MS = 3_600_000;

/** Validates a `maxDecisionWaitMs` option: an integer 0 … `MAX_DECISION_WAIT_MS` (`INVALID_ARGUMENT` naming `field`). */
export function requireMaxDecisionWaitMs(field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0 || value > MAX_DECISION_WAIT_MS) {
    throw invalidArgument(field, `must be an integer number of milliseconds from 0 to ${MAX_DECISION_WAIT_MS}, got ${describe(value)}`);
  }
  return value;
}

/** Validates the optional `applied` member of a request (`INVALID_ARGUMENT` naming `applied`). */
export function requireAppliedInstant(value: unknown): AppliedInstant | undefined {
  if (value === undefined || value === null) return undefined;
  const record = value as Partial<AppliedInstant>;
  if (typeof value !== 'object' || typeof record.nowMs !== 'function') {
    throw invalidArgument('applied', `must be { nowMs(), maxWaitMs } (the plane's clock and bound), got ${describe(value)}`);
  }
  return { nowMs: record.nowMs, maxWaitMs: requireMaxDecisionWaitMs('applied.maxWaitMs', record.maxWaitMs) };
}

/**
 * The instant a decision asked at `askedAtMs` is applied at: `applied.nowMs()` read now (never
 * before `askedAtMs`), or `askedAtMs` itself without `applied`. Call it inside the transaction,
 * once the lock is held. Throws `STORE_UNAVAILABLE` (`details.reason = 'waited-too-long'`,
 * `details.waitedMs`, `details.maxWaitMs`) when the decision waited longer than `applied.maxWaitMs`:
 * the caller writes nothing, so nothing is held.
 */
export function appliedAtMs(what: string, askedAtMs: number, applied: AppliedInstant | undefined): number {
  if (applied === undefined) return askedAtMs;
  const nowMs = requireInstantMs('applied.nowMs()', applied.nowMs());
  const waitedMs = nowMs - askedAtMs;
  if (waitedMs > applied.maxWaitMs) throw waitedTooLong(what, waitedMs, applied.maxWaitMs);
  return Math.max(askedAtMs, nowMs);
}

/**
 * `request` with its `atMs` moved to the instant it is applied ({@link appliedAtMs}) and its
 * `applied` member dropped, for the store's deciding code, which reads only `atMs`.
 */
export function atApply<R extends { readonly atMs: number; readonly applied?: AppliedInstant | undefined }>(what: string, request: R): R {
  if (request.applied === undefined) return request;
  const { applied, ...rest } = request;
  return { ...rest, atMs: appliedAtMs(what, request.atMs, applied) } as unknown as R;
}

/** The fault of a decision that waited past its bound: `STORE_UNAVAILABLE`, nothing decided. */
export function waitedTooLong(what: string, waitedMs: number, maxWaitMs: number): QuotaError {
  return new QuotaError(
    'STORE_UNAVAILABLE',
    `the ${what} waited ${waitedMs} ms for the quota store, longer than the ${maxWaitMs} ms a decision may wait ` +
      `(maxDecisionWaitMs), so it was not applied: nothing was decided and nothing is held; retry, ` +
      'and if this repeats, find what holds the store (a long transaction, a migration, an overloaded host)',
    { details: { reason: 'waited-too-long', operation: what, waitedMs, maxWaitMs } },
  );
}
