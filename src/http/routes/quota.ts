import { Type, type Static, type TSchema } from '@sinclair/typebox';

import { operatorOf } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { MERGE_PATCH_CONSUMES, protectedRoute } from '../route-options.js';
import {
  Amount,
  Identifier,
  AlertThresholds,
  MAX_AGENT_CEILINGS,
  MAX_CONFIGURED_GRANTS,
  MAX_DECLARED_CEILINGS,
  NewTenantQuery,
  NoQuery,
  RateCeiling,
  strictObject,
  TenantParams,
  TenantQuota,
  TenantQuotaInput,
} from '../schemas/common.js';

// A merge-patch member: absent keeps the value, null removes it.
const nullable = <T extends TSchema>(schema: T, description: string) =>
  Type.Optional(Type.Union([schema, Type.Null()], { description: `${description}; null removes it, absent keeps it` }));

/** A JSON Merge Patch of a quota (RFC 7396, core/quota-patch.ts): absent keeps, `null` removes, rate ceilings merge per grant. */
const QuotaPatchBody = strictObject({
  maxConcurrentRuns: nullable(Amount, 'most runs holding a slot at once'),
  maxTokensPerPeriod: nullable(Amount, 'most tokens settled and held per billing period'),
  maxMinorUnitsPerPeriod: nullable(Amount, 'most minor units settled and held per billing period'),
  period: nullable(Type.Union([Type.Literal('monthly'), Type.Literal('daily')]), 'the billing period, monthly or daily (removed: monthly)'),
  rateCeilings: nullable(
    Type.Record(Identifier, Type.Union([Type.Array(RateCeiling, { maxItems: MAX_DECLARED_CEILINGS }), Type.Null()]), {
      maxProperties: MAX_CONFIGURED_GRANTS,
    }),
    "grant → its rate ceilings, merged per grant (a grant's list replaces the old one; null removes the grant)",
  ),
  /** Per agent: merged two levels deep; `null` removes an agent or one of its ceilings. */
  agents: nullable(
    Type.Record(
      Identifier,
      Type.Union([
        strictObject({
          maxConcurrentRuns: nullable(Amount, "most of this agent's runs holding a slot at once"),
          maxTokensPerPeriod: nullable(Amount, 'most tokens settled and held by this agent per billing period'),
          maxMinorUnitsPerPeriod: nullable(Amount, 'most minor units settled and held by this agent per billing period'),
          alertThresholds: nullable(AlertThresholds, "the spend-alert thresholds of this agent's ceilings"),
        }),
        Type.Null(),
      ]),
      { maxProperties: MAX_AGENT_CEILINGS },
    ),
    'agent name → its ceilings, merged two levels deep (null removes an agent or one of its ceilings)',
  ),
  alertThresholds: nullable(AlertThresholds, "the spend-alert thresholds of the tenant's ceilings ([]: none)"),
});

const QuotaReply = strictObject({ tenant: Type.String(), quota: Type.Union([TenantQuota, Type.Null()]) });

/**
 * A tenant's quota: `GET /v1/tenants/{tenant}/quota` answers it (`null` when
 * none was set: no ceilings, monthly periods); `PUT` replaces it, audited as `quota.set` under the
 * key's name with basis `authenticated`, and it applies to the very next admission (docs/design/decisions.md "The quota is read where the decision is made");
 * `PATCH` changes part of it (JSON Merge Patch, `application/merge-patch+json` or `application/json`),
 * audited as `quota.update`. `PUT` and `PATCH` of a tenant that does not exist
 * answer 404 naming it and the nearest known tenant, unless `?newTenant=true` (docs/design/rules.md#l95).
 */
export const quotaRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams> }>(
    '/v1/tenants/:tenant/quota',
    protectedRoute('operator', {
      operationId: 'getQuota',
      summary: "A tenant's quota, or null when none was set",
      params: TenantParams,
      querystring: NoQuery,
      reply: QuotaReply,
    }),
    async (request) => ({ tenant: request.params.tenant, quota: await context.plane.getQuota(request.params.tenant) }),
  );

  app.put<{ Params: Static<typeof TenantParams>; Body: Static<typeof TenantQuotaInput>; Querystring: Static<typeof NewTenantQuery> }>(
    '/v1/tenants/:tenant/quota',
    protectedRoute('operator', {
      operationId: 'setQuota',
      summary: "Replace a tenant's quota (audited); absent ceilings are unlimited, 0 allows nothing (a tenant that does not exist needs ?newTenant=true)",
      params: TenantParams,
      querystring: NewTenantQuery,
      body: TenantQuotaInput,
      reply: QuotaReply,
    }),
    async (request) => {
      const quota = await context.plane.setQuota(
        request.params.tenant,
        { ...request.body, period: request.body.period ?? 'monthly' },
        { by: operatorOf(request), newTenant: request.query.newTenant },
      );
      return { tenant: request.params.tenant, quota };
    },
  );

  app.patch<{ Params: Static<typeof TenantParams>; Body: Static<typeof QuotaPatchBody>; Querystring: Static<typeof NewTenantQuery> }>(
    '/v1/tenants/:tenant/quota',
    protectedRoute('operator', {
      operationId: 'updateQuota',
      summary:
        "Change part of a tenant's quota (JSON Merge Patch, RFC 7396; audited as quota.update with the old and new quota): " +
        'members left out are kept, null removes a ceiling, rate ceilings merge per grant (a tenant that does not exist needs ?newTenant=true)',
      params: TenantParams,
      querystring: NewTenantQuery,
      body: QuotaPatchBody,
      consumes: MERGE_PATCH_CONSUMES,
      reply: QuotaReply,
    }),
    async (request) => {
      const quota = await context.plane.updateQuota(request.params.tenant, request.body, { by: operatorOf(request), newTenant: request.query.newTenant });
      return { tenant: request.params.tenant, quota };
    },
  );
};
