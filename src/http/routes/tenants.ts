import { Type, type Static } from '@sinclair/typebox';

import { keyCoversTenant } from '../../store/api-keys.js';
import { requestKey } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { callerInstant, operatorOf } from '../auth.js';
import { InstantMs, NoQuery, strictObject, TenantParams } from '../schemas/common.js';
import { AuditRecord } from '../schemas/operator.js';
import { MAX_HALT_REASON_LENGTH } from './halts.js';

const TenantsReply = strictObject({ tenants: Type.Array(Type.String()) });

const DeleteBody = strictObject({
  reason: Type.String({ minLength: 1, maxLength: MAX_HALT_REASON_LENGTH, description: 'why the tenant is deleted: kept in its audit chain; not blank' }),
  atMs: Type.Optional(InstantMs),
});

/** What a deletion answers (plane `DeleteTenantAnswer`). */
const DeleteReply = strictObject({
  tenant: Type.String(),
  audit: AuditRecord,
  keysDeleted: Type.Array(Type.String(), { description: "ids of the tenant's own API keys removed with it; they no longer authenticate" }),
});

/**
 * `GET /v1/tenants`: tenants with a quota, a run or a halt, in byte order, as
 * far as the operator key covers them (an operator of one tenant sees at most that one).
 * `POST /v1/tenants/{tenant}/delete` (`{ reason }`, an operator key of every tenant): deletes the
 * tenant but its audit chain (docs/design/rules.md#l95-4–#l95-7); 409 while anything of it still
 * acts or holds spend, naming each.
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

  app.post<{ Params: Static<typeof TenantParams>; Body: Static<typeof DeleteBody> }>(
    '/v1/tenants/:tenant/delete',
    protectedRoute('operator-all-tenants', {
      operationId: 'deleteTenant',
      summary:
        'Delete a tenant: every record of it but its audit chain, its own API keys included, in one transaction ' +
        '(409 while it has running runs, slots, holds, unsettled passes or waiting admissions)',
      params: TenantParams,
      body: DeleteBody,
      reply: DeleteReply,
    }),
    async (request) =>
      context.plane.deleteTenant({
        tenant: request.params.tenant,
        reason: request.body.reason,
        by: operatorOf(request),
        atMs: callerInstant(request, request.body.atMs),
      }),
  );
};
