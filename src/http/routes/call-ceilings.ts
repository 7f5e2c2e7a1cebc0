import { Type, type Static } from '@sinclair/typebox';

import type { CallCeilings as StoredCallCeilings } from '../../core/call-ceilings.js';
import { callerInstant, operatorOf } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { InstantMs, ListingLimit, NewTenantQuery, NoQuery, strictObject, TenantParams } from '../schemas/common.js';
import { CallCeilings, CallCeilingsInput, SubjectStanding } from '../schemas/model-calls.js';

const CeilingsBody = strictObject({
  ceilings: Type.Union([CallCeilingsInput, Type.Null()], { description: "the tenant's model-call ceilings as a whole; null removes them" }),
});
const CeilingsReply = strictObject({ ceilings: Type.Union([CallCeilings, Type.Null()]) });
const StandingsQuery = strictObject({ limit: Type.Optional(ListingLimit), atMs: Type.Optional(InstantMs) });
const StandingsReply = strictObject({ standings: Type.Array(SubjectStanding) });

/**
 * A tenant's model-call ceilings (docs/design/rules.md#m1, #m9, #m10):
 * `GET /v1/tenants/{tenant}/call-ceilings` answers them (`null` when none are set); `PUT` replaces
 * them (`{ ceilings: null }` removes them), audited as `calls.set` under the key's name, keeping what
 * the windows count; a tenant that does not exist answers 404 unless `?newTenant=true`. Both are for
 * operator keys. `GET …/call-standings?limit=&atMs=` answers every subject with a meter or ceilings,
 * what each ceiling counts and the room left; runner keys of the tenant may read it too.
 */
export const callCeilingRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams> }>(
    '/v1/tenants/:tenant/call-ceilings',
    protectedRoute('operator', {
      operationId: 'getCallCeilings',
      summary: "A tenant's model-call ceilings, or null when none are set",
      params: TenantParams,
      querystring: NoQuery,
      reply: CeilingsReply,
    }),
    async (request) => ({ ceilings: await context.plane.getCallCeilings(request.params.tenant) }),
  );

  app.put<{ Params: Static<typeof TenantParams>; Body: Static<typeof CeilingsBody>; Querystring: Static<typeof NewTenantQuery> }>(
    '/v1/tenants/:tenant/call-ceilings',
    protectedRoute('operator', {
      operationId: 'setCallCeilings',
      summary: "Replace a tenant's model-call ceilings (null removes them; audited as calls.set; what the windows count stays; a tenant that does not exist needs ?newTenant=true)",
      params: TenantParams,
      querystring: NewTenantQuery,
      body: CeilingsBody,
      reply: CeilingsReply,
    }),
    async (request) => ({
      // The schema checked the shape; the plane parses the ceilings (parseCallCeilings) and names a bad member.
      ceilings: await context.plane.setCallCeilings(request.params.tenant, request.body.ceilings as StoredCallCeilings | null, {
        by: operatorOf(request),
        newTenant: request.query.newTenant,
      }),
    }),
  );

  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof StandingsQuery> }>(
    '/v1/tenants/:tenant/call-standings',
    protectedRoute('runner', {
      operationId: 'callStandings',
      summary: 'Every subject with a model-call meter or ceilings: what each ceiling counts booked, what calls in flight hold, the room left',
      params: TenantParams,
      querystring: StandingsQuery,
      reply: StandingsReply,
    }),
    async (request) => ({
      standings: await context.plane.callStandings({
        tenant: request.params.tenant,
        limit: request.query.limit,
        atMs: callerInstant(request, request.query.atMs),
      }),
    }),
  );
};
