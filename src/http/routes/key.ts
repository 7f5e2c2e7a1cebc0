import { Type } from '@sinclair/typebox';

import { requestKey } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { NoQuery, strictObject } from '../schemas/common.js';

const KeyReply = strictObject({
  id: Type.String(),
  name: Type.String(),
  role: Type.Union([Type.Literal('runner'), Type.Literal('operator')]),
  tenant: Type.String({ description: "the tenant the key acts for, or '*' for every tenant" }),
});

/**
 * `GET /v1/key`: who the request's key is (`id`, `name`, `role`, `tenant`, `'*'` for
 * every tenant), never the secret. Any valid key may ask about itself; it tells the key nothing it
 * could not learn by calling the routes. The dashboard reads it at sign-in to refuse a runner key
 * with a clear message and to know which tenant an operator key of one tenant covers.
 */
export const keyIdentityRoutes: RouteModule = (app) => {
  app.get(
    '/v1/key',
    protectedRoute('runner', { operationId: 'whoAmI', summary: 'Who the key sending this request is: its name, role and tenant', querystring: NoQuery, reply: KeyReply }),
    async (request) => {
      const { id, name, role, tenant } = requestKey(request);
      return { id, name, role, tenant };
    },
  );
};
