import { Type, type Static } from '@sinclair/typebox';

import { QuotaError } from '../../core/errors.js';
import { callerInstant, operatorOf, requestKey } from '../auth.js';
import { callRefusalProblem } from '../call-refusal-problem.js';
import { PROBLEM_CONTENT_TYPE } from '../errors.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { described, Identifier, ListingLimit, strictObject, TenantParams } from '../schemas/common.js';
import { AdjustCallBody, CallAnswer, CallReservation, ReleaseCallBody, ReserveCallBody } from '../schemas/model-calls.js';

const CallParams = strictObject({
  tenant: TenantParams.properties.tenant,
  callId: described(Identifier, 'the call id, as the reservation answered it'),
});
const OpenCallsQuery = strictObject({ limit: Type.Optional(ListingLimit) });
const OpenCallsReply = strictObject({ calls: Type.Array(CallReservation) });

/**
 * Model calls under a tenant's model-call ceilings (docs/design/rules.md#m3–#m7), for runner keys
 * of the tenant and operator keys covering it:
 * - `POST /v1/tenants/{tenant}/calls` reserves a call's worst case: 201 `{ call, retried: false }`,
 *   200 `{ call, retried: true }` for a retry of an open call's `callId`; `CallLimited` 429 with
 *   `Retry-After` and `retryAtMs`, `CallNeverFits` 422;
 * - `POST …/calls/{callId}/adjust` ends it with its usage (or, without, its worst case booked as an
 *   estimate), `POST …/calls/{callId}/release` gives a failed call's reservation back: `{ call, retried }`;
 * - `GET …/calls/{callId}` one call (404 when unknown; ended calls are kept about a day), and
 *   `GET …/calls?limit=` the calls in flight, earliest deadline first.
 * `atMs` is accepted from an operator key only, as everywhere.
 */
export const modelCallRoutes: RouteModule = (app, context) => {
  app.post<{ Params: Static<typeof TenantParams>; Body: Static<typeof ReserveCallBody> }>(
    '/v1/tenants/:tenant/calls',
    protectedRoute('runner', {
      operationId: 'reserveCall',
      summary: "Reserve a model call's worst case under every model-call ceiling covering it (201; a retry of its callId 200; CallLimited 429, CallNeverFits 422)",
      params: TenantParams,
      body: ReserveCallBody,
      reply: CallAnswer,
      replyStatus: 201,
      alsoReplyStatus: 200,
    }),
    async (request, reply) => {
      const atMs = callerInstant(request, request.body.atMs);
      const outcome = await context.plane.reserveCall({ ...request.body, tenant: request.params.tenant, atMs });
      if (!outcome.ok) {
        const { problem, headers } = callRefusalProblem(outcome.refusal, request.id, atMs ?? context.clock.nowMs());
        return reply.code(problem.status).headers(headers).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
      }
      reply.code(outcome.retried ? 200 : 201);
      return { call: outcome.call, retried: outcome.retried };
    },
  );

  app.post<{ Params: Static<typeof CallParams>; Body: Static<typeof AdjustCallBody> }>(
    '/v1/tenants/:tenant/calls/:callId/adjust',
    protectedRoute('runner', {
      operationId: 'adjustCall',
      summary: 'End a model call with its usage, or without (its worst case is booked as an estimate); a retry answers again with retried',
      params: CallParams,
      body: AdjustCallBody,
      reply: CallAnswer,
    }),
    async (request) =>
      context.plane.adjustCall({
        ...request.body,
        tenant: request.params.tenant,
        callId: request.params.callId,
        atMs: callerInstant(request, request.body.atMs),
      }),
  );

  app.post<{ Params: Static<typeof CallParams>; Body: Static<typeof ReleaseCallBody> }>(
    '/v1/tenants/:tenant/calls/:callId/release',
    protectedRoute('runner', {
      operationId: 'releaseCall',
      summary: "Give a failed model call's reservation back; nothing is booked",
      params: CallParams,
      body: ReleaseCallBody,
      reply: CallAnswer,
    }),
    async (request) =>
      // An operator key frees a stuck call (audited under its name); a runner gives back its own failed one.
      context.plane.releaseCall({
        tenant: request.params.tenant,
        callId: request.params.callId,
        atMs: callerInstant(request, request.body.atMs),
        ...(requestKey(request).role === 'operator' ? { by: operatorOf(request) } : {}),
      }),
  );

  app.get<{ Params: Static<typeof CallParams> }>(
    '/v1/tenants/:tenant/calls/:callId',
    protectedRoute('runner', {
      operationId: 'modelCall',
      summary: 'One model call as stored (ended calls are kept about a day); 404 when unknown',
      params: CallParams,
      reply: CallReservation,
    }),
    async (request) => {
      const call = await context.plane.modelCall({ tenant: request.params.tenant, callId: request.params.callId });
      if (call === null) {
        throw new QuotaError('NOT_FOUND', `tenant '${request.params.tenant}' has no model call '${request.params.callId}' (ended calls are kept about a day); check callId`, {
          details: { field: 'callId' },
        });
      }
      return call;
    },
  );

  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof OpenCallsQuery> }>(
    '/v1/tenants/:tenant/calls',
    protectedRoute('runner', {
      operationId: 'openCalls',
      summary: "A tenant's model calls in flight, earliest deadline first",
      params: TenantParams,
      querystring: OpenCallsQuery,
      reply: OpenCallsReply,
    }),
    async (request) => ({ calls: await context.plane.openCalls({ tenant: request.params.tenant, limit: request.query.limit }) }),
  );
};
