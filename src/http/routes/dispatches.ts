import { Type, type Static } from '@sinclair/typebox';

import { actingTenant, callerInstant } from '../auth.js';
import { sendRefused, type RouteModule } from '../route-context.js';
import {
  Identifier,
  InstantMs,
  MAX_DECLARED_CEILINGS,
  PROBLEM_REPLIES,
  RateCeiling,
  RunParams,
  strictObject,
} from '../schemas/common.js';

const DispatchBody = strictObject({
  tenant: Type.Optional(Identifier),
  grant: Identifier,
  dispatch: Identifier,
  ceilings: Type.Array(RateCeiling, { maxItems: MAX_DECLARED_CEILINGS }),
  exempt: Type.Optional(Type.Boolean()),
  atMs: Type.Optional(InstantMs),
});

const DispatchReply = strictObject({ ok: Type.Literal(true) });

/**
 * `POST /v1/runs/{run}/dispatches` (issue #4 item 2): counts one dispatch of a granted tool against
 * its sliding windows (the caller's ceilings and the tenant's configured ones). `RateLimited`
 * answers 429 with `Retry-After` until the oldest counted dispatch leaves the window;
 * `UncountableRate` answers 422.
 */
export const dispatchRoutes: RouteModule = (app, context) => {
  app.post<{ Params: Static<typeof RunParams>; Body: Static<typeof DispatchBody> }>(
    '/v1/runs/:run/dispatches',
    {
      config: { access: 'runner' },
      schema: {
        summary: 'Count one dispatch of a granted tool (RateLimited 429 with Retry-After, UncountableRate 422)',
        tags: ['runner'],
        security: [{ bearer: [] }],
        params: RunParams,
        body: DispatchBody,
        response: { 200: DispatchReply, ...PROBLEM_REPLIES },
      },
    },
    async (request, reply) => {
      const tenant = actingTenant(request, request.body.tenant);
      const atMs = callerInstant(request, request.body.atMs);
      const result = await context.plane.dispatch({ ...request.body, tenant, run: request.params.run, atMs });
      return result.ok ? result : sendRefused(reply, request, result, context, atMs);
    },
  );
};
