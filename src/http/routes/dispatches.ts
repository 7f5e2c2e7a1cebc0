import { Type, type Static } from '@sinclair/typebox';

import { callerExempt } from '../auth.js';
import { runVerbHandler, type RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import {
  ActingTenant,
  described,
  Identifier,
  InstantMs,
  MAX_DECLARED_CEILINGS,
  LeaseMs,
  RateCeiling,
  RunParams,
  strictObject,
} from '../schemas/common.js';

const DispatchBody = strictObject({
  tenant: Type.Optional(ActingTenant),
  grant: described(Identifier, 'the granted tool, such as tool://payments/refund, whose windows count the dispatch'),
  dispatch: described(Identifier, "the first attempt's idempotency key: a retry or a resumed pass sends the same and is counted once"),
  ceilings: Type.Optional(
    Type.Array(RateCeiling, { maxItems: MAX_DECLARED_CEILINGS, description: "The caller's own ceilings; optional (the quota's configured ceilings for the grant apply either way)" }),
  ),
  exempt: Type.Optional(
    Type.Boolean({ description: 'A compensating dispatch that checks no ceiling; operator keys only (a runner key gets 400 naming exempt)' }),
  ),
  atMs: Type.Optional(InstantMs),
  epoch: Type.Optional(
    Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "the dispatching pass's epoch: fences the dispatch as a heartbeat and renews its lease" }),
  ),
  leaseMs: Type.Optional(LeaseMs),
});

const DispatchReply = strictObject({ ok: Type.Literal(true) });

/**
 * `POST /v1/runs/{run}/dispatches`: counts one dispatch of a granted tool against
 * its sliding windows (the caller's ceilings and the tenant's configured ones). `RateLimited`
 * answers 429 with `Retry-After` until the oldest counted dispatch leaves the window;
 * `UncountableRate` answers 422. With the dispatching pass's `epoch` (and optionally `leaseMs`) the
 * dispatch also renews that pass's lease, fenced as a heartbeat is: a stale epoch answers 409, and
 * a halt that reaches running work (a subject halt on the run's chain, or one thrown with
 * `reachesRunning`; docs/design/rules.md#c44) answers `Withheld` 423 without counting. `exempt`
 * (a compensating dispatch that checks no ceiling) and `atMs` are accepted only from an operator
 * key; a runner key sending either gets 400 naming it.
 */
export const dispatchRoutes: RouteModule = (app, context) => {
  const verb = runVerbHandler(context, (input: Static<typeof DispatchBody> & { tenant: string; run: string; atMs: number | undefined }) =>
    context.plane.dispatch(input),
  );
  app.post<{ Params: Static<typeof RunParams>; Body: Static<typeof DispatchBody> }>(
    '/v1/runs/:run/dispatches',
    protectedRoute('runner', {
      operationId: 'dispatch',
      summary: 'Count one dispatch of a granted tool, renewing the lease with epoch (RateLimited 429, UncountableRate 422, Withheld 423; exempt: operator keys only)',
      params: RunParams,
      body: DispatchBody,
      reply: DispatchReply,
    }),
    async (request, reply) => {
      callerExempt(request, request.body.exempt);
      return verb(request, reply);
    },
  );
};
