import { Type, type Static } from '@sinclair/typebox';

import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { ListingLimit, strictObject, TenantParams } from '../schemas/common.js';

const SlotsQuery = strictObject({ limit: Type.Optional(ListingLimit) });
/** The running set of a tenant (plane `SlotHoldersPage`). */
export const SlotsReply = strictObject({ runs: Type.Array(Type.String()), truncated: Type.Boolean() });

/**
 * `GET /v1/tenants/{tenant}/slots?limit=`: the runs holding one
 * of the tenant's slots (the running set), ascending run id. The run registry, with statuses and
 * leases, is `GET /v1/tenants/{tenant}/runs`.
 */
export const slotRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof SlotsQuery> }>(
    '/v1/tenants/:tenant/slots',
    protectedRoute('operator', {
      operationId: 'slotHolders',
      summary: 'Runs holding a slot (the running set), ascending run id',
      params: TenantParams,
      querystring: SlotsQuery,
      reply: SlotsReply,
    }),
    async (request) => context.plane.slotHolders({ tenant: request.params.tenant, limit: request.query.limit }),
  );
};
