import { Type, type Static } from '@sinclair/typebox';

import { callerInstant, operatorScope } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { Amount, described, InstantMs, ListingLimit, strictObject, TenantParams } from '../schemas/common.js';
import { AttentionReport } from '../schemas/operator.js';

const AttentionQuery = strictObject({
  limit: Type.Optional(described(ListingLimit, 'most conditions of each kind, 1 to 1000; default 100')),
  holdStaleAfterMs: Type.Optional(described(Amount, "age, in ms, at which a paused run's hold is hold.stale; default 86400000 (24 hours)")),
  atMs: Type.Optional(InstantMs),
});

const SUMMARY =
  'What needs a person: run.stranded, run.withheld, hold.stale, pass.unsettled, run.overran, spend.overrun, each with the commands that end it';

/**
 * What needs a person: `GET /v1/tenants/{tenant}/attention` for one tenant and
 * `GET /v1/attention` for every tenant the key covers (all of them for an operator key of every
 * tenant). `limit` caps each kind (`truncatedKinds` names the kinds cut), `holdStaleAfterMs` is
 * the age a paused run's hold becomes `hold.stale`. Read-only.
 */
export const attentionRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof AttentionQuery> }>(
    '/v1/tenants/:tenant/attention',
    protectedRoute('operator', { operationId: 'tenantAttention', summary: SUMMARY, params: TenantParams, querystring: AttentionQuery, reply: AttentionReport }),
    async (request) =>
      context.plane.attention({ ...request.query, tenant: request.params.tenant, atMs: callerInstant(request, request.query.atMs) }),
  );

  app.get<{ Querystring: Static<typeof AttentionQuery> }>(
    '/v1/attention',
    protectedRoute('operator', { operationId: 'attention', summary: `${SUMMARY}; every tenant the key covers`, querystring: AttentionQuery, reply: AttentionReport }),
    async (request) =>
      context.plane.attention({ ...request.query, tenant: operatorScope(request, undefined), atMs: callerInstant(request, request.query.atMs) }),
  );
};
