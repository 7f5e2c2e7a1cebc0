import { Type } from '@sinclair/typebox';

import { keyCoversTenant } from '../../store/api-keys.js';
import { requestKey } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { NoQuery, strictObject } from '../schemas/common.js';

const TenantsReply = strictObject({ tenants: Type.Array(Type.String()) });

/**
 * `GET /v1/tenants`: tenants with a quota, a run or a halt, in byte order, as
 * far as the operator key covers them (an operator of one tenant sees at most that one).
 */
export const tenantRoutes: RouteModule = (app, context) => {
  app.get(
    '/v1/tenants',
    protectedRoute('operator', {
      operationId: 'tenants',
      summary: 'Tenants the operator key covers that have a quota, a run or a halt',
      querystring: NoQuery,
      reply: TenantsReply,
    }),
    async (request) => {
      const key = requestKey(request);
      const tenants = await context.plane.tenants();
      return { tenants: tenants.filter((tenant) => keyCoversTenant(key, tenant)) };
    },
  );
};
