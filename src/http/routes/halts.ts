import { Type, type Static } from '@sinclair/typebox';

import { describeHaltScope, haltReachesRunning, haltScopeKey } from '../../core/halt-scope.js';
import { callerInstant, operatorOf } from '../auth.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { InstantMs, ListingLimit, NewTenantQuery, Operator, ScopeKey, strictObject, TenantParams } from '../schemas/common.js';

/** Whether a thrown halt reaches running work too (docs/design/rules.md#c44). */
export const ReachesRunning = Type.Boolean({
  description:
    'true: the running runs the halt covers answer Withheld at their next heartbeat, dispatch or resume (a subject halt always does); ' +
    'default false: new admissions only',
});

/** Longest halt reason accepted, in characters. */
export const MAX_HALT_REASON_LENGTH = 2000;

const HaltView = strictObject({
  scope: Type.String(),
  covers: Type.String(),
  reason: Type.String(),
  by: Operator,
  atMs: Type.Integer(),
  reachesRunning: Type.Boolean({ description: 'whether running work it covers answers Withheld too (a subject halt always does)' }),
});

/** One recorded lift (plane `LiftedHalt`). */
export const LiftedView = strictObject({
  scope: Type.String(),
  by: Operator,
  liftedAtMs: Type.Integer(),
  reason: Type.String(),
  thrownBy: Operator,
  thrownAtMs: Type.Integer(),
  seq: Type.Integer(),
});

const HaltsQuery = strictObject({
  state: Type.Optional(
    Type.Union([Type.Literal('standing'), Type.Literal('lifted')], { description: 'standing (default): the halts in force; lifted: the recorded lifts, newest first' }),
  ),
  limit: Type.Optional(ListingLimit),
});

const HaltsReply = strictObject({ halts: Type.Array(HaltView), lifted: Type.Array(LiftedView), truncated: Type.Boolean() });

const HaltBody = strictObject({
  scope: ScopeKey,
  reason: Type.String({ minLength: 1, maxLength: MAX_HALT_REASON_LENGTH, description: 'why: every refused caller reads it; not blank' }),
  atMs: Type.Optional(InstantMs),
  reachesRunning: Type.Optional(ReachesRunning),
});

/** What throwing a halt answers (plane `HaltResult`). */
export const HaltReply = strictObject({
  scope: Type.String(),
  reason: Type.String(),
  by: Operator,
  atMs: Type.Integer(),
  reach: Type.Union([Type.Literal('admission'), Type.Literal('admission and running work')]),
  reachesRunning: Type.Boolean({ description: 'whether the halt reaches running work (a subject halt always does)' }),
  running: Type.Integer({
    minimum: 0,
    description: 'runs in the scope running once the halt stood: those it reaches when reachesRunning, else those that continue',
  }),
});

const LiftBody = strictObject({ scope: ScopeKey, atMs: Type.Optional(InstantMs) });

/** What a lift answers (plane `LiftResult`). */
export const LiftReply = strictObject({ wasStanding: Type.Boolean(), removed: Type.Boolean() });

/**
 * Emergency halts: `GET /v1/tenants/{tenant}/halts` lists the
 * standing halts (`?state=lifted` the recorded lifts, newest first, `limit` per page);
 * `POST …/halts` throws one (`{ scope, reason, reachesRunning? }`, no actor field: the operator is the key's name,
 * basis `authenticated`; `?newTenant=true` for a tenant that does not exist yet, docs/design/rules.md#l95);
 * `POST …/halts/lift` lifts one (`{ scope }`), journaled first.
 */
export const haltRoutes: RouteModule = (app, context) => {
  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof HaltsQuery> }>(
    '/v1/tenants/:tenant/halts',
    protectedRoute('operator', {
      operationId: 'listHalts',
      summary: 'Standing halts of a tenant, or with ?state=lifted its recorded lifts (newest first)',
      params: TenantParams,
      querystring: HaltsQuery,
      reply: HaltsReply,
    }),
    async (request) => {
      const { tenant } = request.params;
      if (request.query.state === 'lifted') {
        const page = await context.plane.liftedHalts({ tenant, limit: request.query.limit });
        return { halts: [], lifted: page.lifted, truncated: page.truncated };
      }
      const standing = await context.plane.halts(tenant);
      return {
        halts: standing.map((halt) => ({
          scope: haltScopeKey(halt.scope),
          covers: describeHaltScope(halt.scope),
          reason: halt.reason,
          by: halt.by,
          atMs: halt.atMs,
          reachesRunning: haltReachesRunning(halt),
        })),
        lifted: [],
        truncated: false,
      };
    },
  );

  app.post<{ Params: Static<typeof TenantParams>; Body: Static<typeof HaltBody>; Querystring: Static<typeof NewTenantQuery> }>(
    '/v1/tenants/:tenant/halts',
    protectedRoute('operator', {
      operationId: 'halt',
      summary: 'Throw (or re-throw) a halt on a scope; audited before it stands (a tenant that does not exist needs ?newTenant=true)',
      params: TenantParams,
      querystring: NewTenantQuery,
      body: HaltBody,
      reply: HaltReply,
    }),
    async (request) =>
      context.plane.halt({
        tenant: request.params.tenant,
        scope: request.body.scope,
        reason: request.body.reason,
        by: operatorOf(request),
        atMs: callerInstant(request, request.body.atMs),
        newTenant: request.query.newTenant,
        reachesRunning: request.body.reachesRunning,
      }),
  );

  app.post<{ Params: Static<typeof TenantParams>; Body: Static<typeof LiftBody> }>(
    '/v1/tenants/:tenant/halts/lift',
    protectedRoute('operator', {
      operationId: 'lift',
      summary: 'Lift a halt: journaled first, then removed only if it is still the halt read',
      params: TenantParams,
      body: LiftBody,
      reply: LiftReply,
    }),
    async (request) =>
      context.plane.lift({
        tenant: request.params.tenant,
        scope: request.body.scope,
        by: operatorOf(request),
        atMs: callerInstant(request, request.body.atMs),
      }),
  );
};
