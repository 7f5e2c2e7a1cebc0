import { Type, type Static } from '@sinclair/typebox';

import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { ListingLimit, strictObject, TenantParams } from '../schemas/common.js';
import { Held } from '../schemas/operator.js';

const ReservationsQuery = strictObject({ limit: Type.Optional(ListingLimit) });
const ReservationsReply = strictObject({ reservations: Type.Array(Held), truncated: Type.Boolean() });

/** `GET /v1/tenants/{tenant}/reservations?limit=`: the tenant's holds, ascending run id. */
export const reservationRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof ReservationsQuery> }>(
    '/v1/tenants/:tenant/reservations',
    protectedRoute('operator', {
      operationId: 'reservations',
      summary: 'Spend holds of open runs: run, period held in, remaining worst case',
      params: TenantParams,
      querystring: ReservationsQuery,
      reply: ReservationsReply,
    }),
    async (request) => {
      const page = await context.plane.reservations({ tenant: request.params.tenant, limit: request.query.limit });
      return { reservations: page.holds, truncated: page.truncated };
    },
  );
};
