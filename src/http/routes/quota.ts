import { Type, type Static } from '@sinclair/typebox';

import { operatorOf } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { NoQuery, strictObject, TenantParams, TenantQuota, TenantQuotaInput } from '../schemas/common.js';

const QuotaReply = strictObject({ tenant: Type.String(), quota: Type.Union([TenantQuota, Type.Null()]) });

/**
 * A tenant's quota (issue #4 item 2): `GET /v1/tenants/{tenant}/quota` answers it (`null` when
 * none was set: no ceilings, monthly periods); `PUT` replaces it, audited as `quota.set` under the
 * key's name with basis `authenticated`, and it applies to the very next admission (DESIGN.md decision 5).
 */
export const quotaRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams> }>(
    '/v1/tenants/:tenant/quota',
    protectedRoute('operator', {
      summary: "A tenant's quota, or null when none was set",
      params: TenantParams,
      querystring: NoQuery,
      reply: QuotaReply,
    }),
    async (request) => ({ tenant: request.params.tenant, quota: await context.plane.getQuota(request.params.tenant) }),
  );

  app.put<{ Params: Static<typeof TenantParams>; Body: Static<typeof TenantQuotaInput> }>(
    '/v1/tenants/:tenant/quota',
    protectedRoute('operator', {
      summary: "Replace a tenant's quota (audited); absent ceilings are unlimited, 0 allows nothing",
      params: TenantParams,
      body: TenantQuotaInput,
      reply: QuotaReply,
    }),
    async (request) => {
      const quota = await context.plane.setQuota(
        request.params.tenant,
        { ...request.body, period: request.body.period ?? 'monthly' },
        operatorOf(request),
      );
      return { tenant: request.params.tenant, quota };
    },
  );
};
