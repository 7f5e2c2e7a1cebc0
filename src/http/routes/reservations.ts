import { Type, type Static } from '@sinclair/typebox';

import type { RouteModule } from '../route-context.js';
import { ListingLimit, PROBLEM_REPLIES, strictObject, TenantParams } from '../schemas/common.js';
import { Held } from '../schemas/operator.js';

const ReservationsQuery = strictObject({ limit: Type.Optional(ListingLimit) });
const ReservationsReply = strictObject({ reservations: Type.Array(Held), truncated: Type.Boolean() });

/** `GET /v1/tenants/{tenant}/reservations?limit=` (issue #4 item 2): the tenant's holds, ascending run id. */
export const reservationRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof ReservationsQuery> }>(
    '/v1/tenants/:tenant/reservations',
    {
      config: { access: 'operator' },
      schema: {
        summary: 'Spend holds of open runs: run, period held in, remaining worst case',
        tags: ['operator'],
        security: [{ bearer: [] }],
        params: TenantParams,
        querystring: ReservationsQuery,
        response: { 200: ReservationsReply, ...PROBLEM_REPLIES },
      },
    },
    async (request) => {
      const page = await context.plane.reservations({ tenant: request.params.tenant, limit: request.query.limit });
      return { reservations: page.holds, truncated: page.truncated };
    },
  );
};
