import { Type, type Static } from '@sinclair/typebox';

import { runVerbHandler, type RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import {
  Identifier,
  InstantMs,
  MAX_DECLARED_CEILINGS,
  PositiveMs,
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
  epoch: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  leaseMs: Type.Optional(PositiveMs),
});

const DispatchReply = strictObject({ ok: Type.Literal(true) });

/**
 * `POST /v1/runs/{run}/dispatches` (issue #4 item 2): counts one dispatch of a granted tool against
 * its sliding windows (the caller's ceilings and the tenant's configured ones). `RateLimited`
 * answers 429 with `Retry-After` until the oldest counted dispatch leaves the window;
 * `UncountableRate` answers 422. With the dispatching pass's `epoch` (and optionally `leaseMs`) the
 * dispatch also renews that pass's lease, fenced as a heartbeat is: a stale epoch answers 409, and
 * a subject halt on the run's chain answers `Withheld` 423 without counting (issue #5).
 */
export const dispatchRoutes: RouteModule = (app, context) => {
  app.post<{ Params: Static<typeof RunParams>; Body: Static<typeof DispatchBody> }>(
    '/v1/runs/:run/dispatches',
    protectedRoute('runner', {
      summary: 'Count one dispatch of a granted tool, renewing the lease with epoch (RateLimited 429, UncountableRate 422, Withheld 423)',
      params: RunParams,
      body: DispatchBody,
      reply: DispatchReply,
    }),
    runVerbHandler(context, (input) => context.plane.dispatch(input)),
  );
};
