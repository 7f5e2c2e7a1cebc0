import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { Clock } from '../core/clock.js';
import type { Refused } from '../core/refusal.js';
import type { Plane } from '../plane/plane.js';
import type { QuotaStore } from '../store/store.js';
import { PROBLEM_CONTENT_TYPE, refusalProblem, type RetryAfterDefaults } from './errors.js';
import type { ServiceMetrics } from './metrics.js';

/** What every route file gets: the plane (metered; its listings too), the store (readiness only), the clock and metrics. */
export interface RouteContext {
  readonly plane: Plane;
  readonly store: QuotaStore;
  readonly clock: Clock;
  readonly metrics: ServiceMetrics;
  readonly retryAfter: RetryAfterDefaults;
}

/**
 * One route file: registers its routes on `app`. Adding a resource is one new file and one line
 * in `routes/index.ts`.
 */
export type RouteModule = (app: FastifyInstance, context: RouteContext) => void;

/**
 * Sends a refusal value as its problem reply (status by code, `Retry-After` where known).
 * `decidedAtMs` is the instant the plane decided at: the request's `atMs`, else the clock now.
 */
export function sendRefused(
  reply: FastifyReply,
  request: FastifyRequest,
  refused: Refused,
  context: RouteContext,
  decidedAtMs: number | undefined,
): FastifyReply {
  const { problem, headers } = refusalProblem(refused, request.id, decidedAtMs ?? context.clock.nowMs(), context.retryAfter);
  return reply.code(problem.status).headers(headers).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}
