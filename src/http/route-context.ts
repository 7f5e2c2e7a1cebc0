import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { Clock } from '../core/clock.js';
import type { Refused } from '../core/refusal.js';
import type { Plane } from '../plane/plane.js';
import type { ApiKeyStore } from '../store/api-keys.js';
import type { QuotaStore } from '../store/store.js';
import { actingTenant, callerInstant } from './auth.js';
import { PROBLEM_CONTENT_TYPE, refusalProblem, type RetryAfterDefaults, type SpentOutStatus } from './errors.js';
import type { ServiceMetrics } from './metrics.js';

/** What every route file gets: the plane (metered; its listings too), the store (readiness only), the clock and metrics. */
export interface RouteContext {
  readonly plane: Plane;
  readonly store: QuotaStore;
  /** The API keys requests are checked against; the key routes manage them. */
  readonly keys: ApiKeyStore;
  readonly clock: Clock;
  readonly metrics: ServiceMetrics;
  readonly retryAfter: RetryAfterDefaults;
  /** The status of a `SpentOut` only the period's end clears (errors.ts `SpentOutStatus`). */
  readonly spentOutStatus: SpentOutStatus;
  /** Why the service is not ready now (store not open yet, stopping), or `null`: `/readyz` answers 503 with it. */
  readonly readiness: () => string | null;
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
  const { problem, headers } = refusalProblem(refused, request.id, decidedAtMs ?? context.clock.nowMs(), context.retryAfter, context.spentOutStatus);
  return reply.code(problem.status).headers(headers).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

/** What a runner's body on one run may carry besides the verb's own members: the tenant it repeats and an operator's instant. */
interface RunnerBody {
  readonly tenant?: string | undefined;
  readonly atMs?: number | undefined;
}

/**
 * The handler of a runner route on one run (`/v1/runs/{run}/…`): the tenant the key acts for
 * (`actingTenant`), the instant only an operator may supply (`callerInstant`), one plane call with
 * the body, the tenant, the path's run and the instant, and a refusal value answered as its
 * problem reply (`Withheld` 423, `RateLimited` 429, …). Faults propagate to the error handler.
 */
export function runVerbHandler<Body extends RunnerBody, Result extends { readonly ok: boolean }>(
  context: RouteContext,
  call: (input: Body & { tenant: string; run: string; atMs: number | undefined }) => Promise<Result>,
) {
  return async (request: FastifyRequest<{ Params: { run: string }; Body: Body }>, reply: FastifyReply) => {
    // Fastify's inferred body type loses the generic's members; the route's schema validated it as Body.
    const body = request.body as Body;
    const tenant = actingTenant(request, body.tenant);
    const atMs = callerInstant(request, body.atMs);
    const result = await call({ ...body, tenant, run: request.params.run, atMs });
    return result.ok ? result : sendRefused(reply, request, result as unknown as Refused, context, atMs);
  };
}
