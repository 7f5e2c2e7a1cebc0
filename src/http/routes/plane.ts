import { Type, type Static, type TSchema } from '@sinclair/typebox';

import { callerInstant, operatorOf } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { MERGE_PATCH_CONSUMES, protectedRoute } from '../route-options.js';
import { AlertThresholds, Amount, Identifier, InstantMs, MAX_AGENT_CEILINGS, NoQuery, Operator, PlaneCeiling, PlaneCeilingInput, strictObject } from '../schemas/common.js';
import { HaltReply, LiftReply, MAX_HALT_REASON_LENGTH, ReachesRunning } from './halts.js';

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
  alertThresholds: nullable(AlertThresholds, 'the default spend-alert thresholds of every tenant whose quota sets none'),
});

const CeilingReply = strictObject({ ceiling: PlaneCeiling });

const Counts = Type.Array(Type.Integer({ minimum: 0 }), { description: 'one count per minute of `minutes`, oldest first' });

/** Refused admissions per tenant per minute over the last hour, this instance's count (refusal-history.ts). */
export const RefusalHistoryReply = strictObject({
  atMs: Type.Integer({ description: 'when this was read (the server clock)' }),
  sinceMs: Type.Integer({ description: 'when this instance began counting (its start): nothing before it is known' }),
  minuteMs: Type.Integer(),
  minutes: Type.Array(Type.Integer(), { description: 'the start of each minute (UTC ms), oldest first, ending with the current one' }),
  tenants: Type.Array(strictObject({ tenant: Type.String(), total: Type.Integer({ minimum: 0 }), perMinute: Counts }), {
    description: 'the busiest tenants by refusals in the hour (then by name), at most tenantBound',
  }),
  other: Type.Array(Type.Integer({ minimum: 0 }), { description: 'every other tenant, summed per minute, oldest first' }),
  tenantBound: Type.Integer({ description: 'most tenants counted by name (serve --metrics-tenants); the rest are in other' }),
});

/** The plane-wide ceiling and what it bounds now (plane `PlaneStatus`). */
export const PlaneStatusReply = strictObject({
  ceiling: Type.Union([PlaneCeiling, Type.Null()]),
  running: Type.Union([Type.Integer(), Type.Null()]),
  limit: Type.Union([Type.Integer(), Type.Null()]),
  agents: Type.Array(strictObject({ agent: Type.String(), running: Type.Integer(), limit: Type.Union([Type.Integer(), Type.Null()]) })),
  halt: Type.Union([
    strictObject(
      {
        reason: Type.String(),
        by: Operator,
        atMs: Type.Integer(),
        reachesRunning: Type.Boolean({ description: 'whether the running runs of every tenant answer Withheld too' }),
      },
      { description: 'the standing plane-wide halt over every tenant' },
    ),
    Type.Null(),
  ]),
});

const PlaneHaltBody = strictObject({
  reason: Type.String({ minLength: 1, maxLength: MAX_HALT_REASON_LENGTH, description: 'why: every refused caller of every tenant reads it; not blank' }),
  atMs: Type.Optional(InstantMs),
  reachesRunning: Type.Optional(ReachesRunning),
});

const PlaneLiftBody = strictObject({ atMs: Type.Optional(InstantMs) });

/**
 * The plane-wide ceiling (docs/design/rules.md#k3), for operator keys of every tenant only (it bounds them all):
 * `GET /v1/plane` answers the ceiling (`null`: none) with every tenant's running slots against it
 * and each bounded agent's; `PUT /v1/plane/ceiling` replaces it, audited as `plane.set` in the
 * `quotaplane:plane` chain under the key's name; `PATCH /v1/plane/ceiling` changes part of it (JSON
 * Merge Patch), audited as `plane.update`. It applies to the next admission on every instance.
 * `POST /v1/plane/halt` throws the plane-wide halt over every tenant (`{ reason, reachesRunning? }`,
 * audited as `plane.halt`) and `POST /v1/plane/halt/lift` lifts it (docs/design/rules.md#c49–#c51).
 * `GET /v1/plane/refusals` answers refused admissions per tenant per minute over the last hour as
 * counted in memory by this instance since it started (not stored; other instances count their own).
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

  app.post<{ Body: Static<typeof PlaneHaltBody> }>(
    '/v1/plane/halt',
    protectedRoute('operator-all-tenants', {
      operationId: 'haltPlane',
      summary:
        'Throw (or re-throw) the plane-wide halt over every tenant (audited as plane.halt); reachesRunning: true withholds running work too. ' +
        'Answers how many runs of every tenant were running',
      querystring: NoQuery,
      body: PlaneHaltBody,
      reply: HaltReply,
    }),
    async (request) =>
      context.plane.haltPlane({
        reason: request.body.reason,
        by: operatorOf(request),
        atMs: callerInstant(request, request.body.atMs),
        reachesRunning: request.body.reachesRunning,
      }),
  );

  app.post<{ Body: Static<typeof PlaneLiftBody> }>(
    '/v1/plane/halt/lift',
    protectedRoute('operator-all-tenants', {
      operationId: 'liftPlaneHalt',
      summary: 'Lift the plane-wide halt (audited as plane.lift), removed only if it is still the halt read',
      querystring: NoQuery,
      body: PlaneLiftBody,
      reply: LiftReply,
    }),
    async (request) => context.plane.liftPlaneHalt({ by: operatorOf(request), atMs: callerInstant(request, request.body.atMs) }),
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

  app.get(
    '/v1/plane/refusals',
    protectedRoute('operator-all-tenants', {
      operationId: 'planeRefusals',
      summary: "Refused admissions per tenant per minute over the last hour: this instance's count since it started, kept in memory only",
      querystring: NoQuery,
      reply: RefusalHistoryReply,
    }),
    async () => context.metrics.refusalHistory.snapshot(context.clock.nowMs()),
  );
};
