import { Type, type Static } from '@sinclair/typebox';

import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { described, Identifier, ListingLimit, NoQuery, strictObject, TenantParams } from '../schemas/common.js';
import { AuditRecord, AuditVerification } from '../schemas/operator.js';

const AuditQuery = strictObject({
  limit: Type.Optional(ListingLimit),
  action: Type.Optional(described(Identifier, 'only rows of this action: halt, lift, quota.set, quota.update, run.settle, run.release, key.create, …')),
});
/** A page of a tenant's audit log (plane `AuditLogPage`). */
export const AuditReply = strictObject({ rows: Type.Array(AuditRecord), truncated: Type.Boolean() });

/**
 * A tenant's audit log: `GET /v1/tenants/{tenant}/audit?limit=&action=` lists
 * its rows newest first (every halt, lift, quota change, operator release and settle, with who,
 * when, the basis, what changed and the row's hash); `GET …/audit/verify` recomputes the tenant's
 * SHA-256 chain and names the first row that does not match (`ok: false`, still 200: the finding
 * is the answer).
 */
export const auditRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof AuditQuery> }>(
    '/v1/tenants/:tenant/audit',
    protectedRoute('operator', {
      operationId: 'auditLog',
      summary: "A tenant's audit rows, newest first, optionally of one action",
      params: TenantParams,
      querystring: AuditQuery,
      reply: AuditReply,
    }),
    async (request) => context.plane.auditLog({ tenant: request.params.tenant, ...request.query }),
  );

  app.get<{ Params: Static<typeof TenantParams> }>(
    '/v1/tenants/:tenant/audit/verify',
    protectedRoute('operator', {
      operationId: 'verifyAudit',
      summary: "Recompute a tenant's audit hash chain and name the first row that does not match",
      params: TenantParams,
      querystring: NoQuery,
      reply: AuditVerification,
    }),
    async (request) => context.plane.verifyAudit({ tenant: request.params.tenant }),
  );
};
