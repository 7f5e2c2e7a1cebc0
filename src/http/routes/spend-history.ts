import { Type, type Static } from '@sinclair/typebox';

import { MAX_HISTORY_PERIODS } from '../../core/recent-periods.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { Amount, InstantMs, RateCeiling, Spend, strictObject, TenantParams, TenantQuota } from '../schemas/common.js';

const SpendHistoryQuery = strictObject({
  periods: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HISTORY_PERIODS, description: 'how many billing periods, ending with the current one (default 12)' })),
  atMs: Type.Optional(InstantMs),
});

/** A tenant's spend over recent periods (plane `SpendHistory`). */
export const SpendHistoryReply = strictObject({
  tenant: Type.String(),
  periodKind: Type.Union([Type.Literal('monthly'), Type.Literal('daily')]),
  periods: Type.Array(strictObject({ period: Type.String(), spent: Spend, reserved: Spend })),
  quota: Type.Union([TenantQuota, Type.Null()]),
});

const RateWindowsQuery = strictObject({ atMs: Type.Optional(InstantMs) });

/** A tenant's configured rate windows now (plane `RateWindows`). */
export const RateWindowsReply = strictObject({
  tenant: Type.String(),
  atMs: Type.Integer(),
  windows: Type.Array(strictObject({ grant: Type.String(), ceiling: RateCeiling, counted: Type.Union([Amount, Type.Null()]) })),
});

/**
 * Reads the dashboard needs, operator-only like every tenant route:
 * `GET /v1/tenants/{tenant}/spend?periods=` the settled and held spend of the tenant's recent
 * billing periods, oldest first (kind from its quota now; default 12, at most 36), and
 * `GET /v1/tenants/{tenant}/rates` its configured rate ceilings with each window's count now.
 * `atMs` (operator keys only, as everywhere) moves "now"; default the server's clock.
 */
export const spendHistoryRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof SpendHistoryQuery> }>(
    '/v1/tenants/:tenant/spend',
    protectedRoute('operator', {
      operationId: 'spendHistory',
      summary: "A tenant's settled and held spend over its recent billing periods, oldest first",
      params: TenantParams,
      querystring: SpendHistoryQuery,
      reply: SpendHistoryReply,
    }),
    async (request) => context.plane.spendHistory({ tenant: request.params.tenant, ...request.query }),
  );

  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof RateWindowsQuery> }>(
    '/v1/tenants/:tenant/rates',
    protectedRoute('operator', {
      operationId: 'rateWindows',
      summary: "A tenant's configured rate ceilings with how many dispatches each window holds now",
      params: TenantParams,
      querystring: RateWindowsQuery,
      reply: RateWindowsReply,
    }),
    async (request) => context.plane.rateWindows({ tenant: request.params.tenant, ...request.query }),
  );
};
