import type { IncomingMessage } from 'node:http';
import { monotonicFactory } from 'ulid';

import { pooledRandom } from '../plane/pooled-random.js';

/** The header a request id is read from (when the caller or a proxy set one) and echoed in. */
export const REQUEST_ID_HEADER = 'x-request-id';

// An id a caller sends is logged and echoed, so it is held to a short, plain alphabet: anything
// else (control characters, a megabyte of text) is replaced by our own id rather than trusted.
const ACCEPTED_ID = /^[A-Za-z0-9._:=-]{1,128}$/;

/**
 * Fastify's `genReqId`: the caller's `x-request-id` when it is 1–128 characters of
 * `A–Z a–z 0–9 . _ : = -`, else a new `req_<ULID>` (monotonic, so ids sort by arrival).
 */
export function requestIdGenerator(): (request: IncomingMessage) => string {
  const next = monotonicFactory(pooledRandom());
  return (request) => {
    const given = request.headers[REQUEST_ID_HEADER];
    if (typeof given === 'string' && ACCEPTED_ID.test(given)) return given;
    return `req_${next()}`;
  };
}
