import { Type, type Static } from '@sinclair/typebox';

import { keyCoversTenant, type ApiKeyStore } from '../../store/api-keys.js';
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
 * Revokes, at `atMs`, the keys of `tenant` still active in `keys`, the key store the service
 * authenticates with, and answers their ids. The store's deletion has removed the tenant's keys it
 * holds itself; a service whose keys are kept elsewhere (`createMemoryApiKeyStore`) would
 * otherwise still let the deleted tenant's keys in (docs/design/rules.md#l95-5), and a runner key
 * admit into the tenant again, with no quota.
 */
async function revokeTenantKeys(keys: ApiKeyStore, tenant: string, atMs: number): Promise<string[]> {
  const revoked: string[] = [];
  for (const key of await keys.list()) {
    if (key.tenant !== tenant || key.revokedAtMs !== null) continue;
    if ((await keys.revoke(key.id, atMs)) === 'revoked') revoked.push(key.id);
  }
  return revoked;
}

/**
 * `GET /v1/tenants`: tenants with a quota, a run or a halt, in byte order, as
 * far as the operator key covers them (an operator of one tenant sees at most that one).
 * `POST /v1/tenants/{tenant}/delete` (`{ reason }`, an operator key of every tenant): deletes the
 * tenant but its audit chain (docs/design/rules.md#l95-4–#l95-7); 409 while anything of it still
 * acts or holds spend, naming each. Keys of the tenant the service's own key store still holds
 * (kept apart from the store) are revoked and named in `keysDeleted` too.
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
        '(409 while it has running runs, slots, holds, unsettled passes, waiting admissions or model calls in flight)',
      params: TenantParams,
      body: DeleteBody,
      reply: DeleteReply,
    }),
    async (request) => {
      const answer = await context.plane.deleteTenant({
        tenant: request.params.tenant,
        reason: request.body.reason,
        by: operatorOf(request),
        atMs: callerInstant(request, request.body.atMs),
      });
      const revoked = await revokeTenantKeys(context.keys, answer.tenant, answer.audit.atMs);
      if (revoked.length === 0) return answer;
      return { ...answer, keysDeleted: [...new Set([...answer.keysDeleted, ...revoked])].sort() };
    },
  );
};
