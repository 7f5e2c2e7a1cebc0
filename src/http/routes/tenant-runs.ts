import { Type, type Static } from '@sinclair/typebox';

import type { RouteModule } from '../route-context.js';
import { ListingLimit, PROBLEM_REPLIES, strictObject, TenantParams } from '../schemas/common.js';

const RunsQuery = strictObject({ limit: Type.Optional(ListingLimit) });
const RunsReply = strictObject({ runs: Type.Array(Type.String()), truncated: Type.Boolean() });

/** `GET /v1/tenants/{tenant}/runs?limit=` (issue #4 item 2): the runs holding one of the tenant's slots, ascending run id. */
export const tenantRunRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof RunsQuery> }>(
    '/v1/tenants/:tenant/runs',
    {
      config: { access: 'operator' },
      schema: {
        summary: 'Runs holding a slot (the running set), ascending run id',
        tags: ['operator'],
        security: [{ bearer: [] }],
        params: TenantParams,
        querystring: RunsQuery,
        response: { 200: RunsReply, ...PROBLEM_REPLIES },
      },
    },
    async (request) => {
      const page = await context.listings.slotHolders(request.params.tenant, { limit: request.query.limit });
      return { runs: page.items, truncated: page.truncated };
    },
  );
};
