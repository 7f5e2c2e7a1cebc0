import { Type, type Static } from '@sinclair/typebox';

import { actingTenant } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { ActingTenant, PeriodKey, strictObject, TenantParams, Usage } from '../schemas/common.js';

const RunnerUsageQuery = strictObject({ tenant: Type.Optional(ActingTenant), period: Type.Optional(PeriodKey) });
const TenantUsageQuery = strictObject({ period: Type.Optional(PeriodKey) });

/**
 * A tenant's figures for one period (spent, reserved, running, quota):
 * `GET /v1/usage?period=` for runners (their own tenant) and `GET /v1/tenants/{tenant}/usage?period=`
 * for operators. The period defaults to the tenant's current one on the server's clock.
 */
export const usageRoutes: RouteModule = (app, context) => {
  app.get<{ Querystring: Static<typeof RunnerUsageQuery> }>(
    '/v1/usage',
    protectedRoute('runner', {
      operationId: 'usage',
      summary: "The key's tenant's spent, reserved and running figures for a period, with its quota",
      querystring: RunnerUsageQuery,
      reply: Usage,
    }),
    async (request) => {
      const tenant = actingTenant(request, request.query.tenant);
      return context.plane.usage({ tenant, period: request.query.period });
    },
  );

  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof TenantUsageQuery> }>(
    '/v1/tenants/:tenant/usage',
    protectedRoute('operator', {
      operationId: 'tenantUsage',
      summary: "A tenant's spent, reserved and running figures for a period, with its quota",
      params: TenantParams,
      querystring: TenantUsageQuery,
      reply: Usage,
    }),
    async (request) => context.plane.usage({ tenant: request.params.tenant, period: request.query.period }),
  );
};
