import { Type, type Static, type TSchema } from '@sinclair/typebox';

import { operatorOf } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { MERGE_PATCH_CONSUMES, protectedRoute } from '../route-options.js';
import { Amount, Identifier, MAX_AGENT_CEILINGS, NoQuery, PlaneCeiling, PlaneCeilingInput, strictObject } from '../schemas/common.js';

// A merge-patch member: absent keeps the value, null removes it.
const nullable = <T extends TSchema>(schema: T, description: string) =>
  Type.Optional(Type.Union([schema, Type.Null()], { description: `${description}; null removes it, absent keeps it` }));

/** A JSON Merge Patch of the plane-wide ceiling (core applyPlanePatch): absent keeps, `null` removes, agents and weights merge per key. */
const PlanePatchBody = strictObject({
  maxConcurrentRuns: nullable(Amount, 'most runs holding a slot at once across every tenant'),
  agents: nullable(
    Type.Record(
      Identifier,
      Type.Union([strictObject({ maxConcurrentRuns: nullable(Amount, "most of this agent's runs holding a slot at once, across every tenant") }), Type.Null()]),
      { maxProperties: MAX_AGENT_CEILINGS },
    ),
    'agent name → its ceiling, merged per agent',
  ),
  weights: nullable(
    Type.Record(Identifier, Type.Union([Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()])),
    'tenant → its weight (at least 1) when waiting admissions share plane slots, merged per tenant',
  ),
});

const CeilingReply = strictObject({ ceiling: PlaneCeiling });

/** The plane-wide ceiling and what it bounds now (plane `PlaneStatus`). */
export const PlaneStatusReply = strictObject({
  ceiling: Type.Union([PlaneCeiling, Type.Null()]),
  running: Type.Union([Type.Integer(), Type.Null()]),
  limit: Type.Union([Type.Integer(), Type.Null()]),
  agents: Type.Array(strictObject({ agent: Type.String(), running: Type.Integer(), limit: Type.Union([Type.Integer(), Type.Null()]) })),
});

/**
 * The plane-wide ceiling (docs/design/rules.md#k3), for operator keys of every tenant only (it bounds them all):
 * `GET /v1/plane` answers the ceiling (`null`: none) with every tenant's running slots against it
 * and each bounded agent's; `PUT /v1/plane/ceiling` replaces it, audited as `plane.set` in the
 * `quotaplane:plane` chain under the key's name; `PATCH /v1/plane/ceiling` changes part of it (JSON
 * Merge Patch), audited as `plane.update`. It applies to the next admission on every instance.
 */
export const planeRoutes: RouteModule = (app, context) => {
  app.get(
    '/v1/plane',
    protectedRoute('operator-all-tenants', {
      operationId: 'planeStatus',
      summary: 'The plane-wide ceiling and the running slots of every tenant (and bounded agent) against it',
      querystring: NoQuery,
      reply: PlaneStatusReply,
    }),
    async () => context.plane.planeStatus(),
  );

  app.put<{ Body: Static<typeof PlaneCeilingInput> }>(
    '/v1/plane/ceiling',
    protectedRoute('operator-all-tenants', {
      operationId: 'setPlaneCeiling',
      summary: 'Replace the plane-wide ceiling (audited as plane.set); absent ceilings are unlimited, 0 allows nothing',
      querystring: NoQuery,
      body: PlaneCeilingInput,
      reply: CeilingReply,
    }),
    async (request) => ({ ceiling: await context.plane.setPlaneCeiling(request.body, operatorOf(request)) }),
  );

  app.patch<{ Body: Static<typeof PlanePatchBody> }>(
    '/v1/plane/ceiling',
    protectedRoute('operator-all-tenants', {
      operationId: 'updatePlaneCeiling',
      summary:
        'Change part of the plane-wide ceiling (JSON Merge Patch, RFC 7396; audited as plane.update): members left out are kept, ' +
        'null removes one, agents and weights merge per key',
      querystring: NoQuery,
      body: PlanePatchBody,
      consumes: MERGE_PATCH_CONSUMES,
      reply: CeilingReply,
    }),
    async (request) => ({ ceiling: await context.plane.updatePlaneCeiling(request.body, operatorOf(request)) }),
  );
};
