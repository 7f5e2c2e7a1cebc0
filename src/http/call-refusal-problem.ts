import { callRefusalMessage, type CallRefusal } from '../core/call-refusal.js';
import { problemTitle, problemType, secondsUntil, statusOf, type ProblemReply } from './errors.js';

/**
 * The reply for a refused model call (core/call-refusal.ts): `CallLimited` answers 429 with
 * `Retry-After` (seconds until `retryAtMs`, at least 1, counted from `decidedAtMs`, the instant the
 * plane decided at), `CallNeverFits` 422 without one, since waiting cannot help. `detail` is
 * {@link callRefusalMessage}; the refusal's fields are the problem's extension members, so the
 * client decodes the same value back (client/problem-decoding.ts).
 */
export function callRefusalProblem(refusal: CallRefusal, requestId: string, decidedAtMs: number): ProblemReply {
  return {
    problem: {
      type: problemType(refusal.code),
      title: problemTitle(refusal.code),
      status: statusOf(refusal.code),
      detail: callRefusalMessage(refusal),
      ...refusal,
      code: refusal.code,
      requestId,
    },
    headers: refusal.code === 'CallLimited' ? { 'retry-after': String(secondsUntil(refusal.retryAtMs, decidedAtMs)) } : {},
  };
}
