import { Type, type Static } from '@sinclair/typebox';

import { EVENT_TYPES } from '../../core/events.js';
import { MAX_INSTANT_MS } from '../../core/instant.js';
import { MAX_LIST_LIMIT } from '../../plane/operator-types.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { AlertThreshold, ListingLimit, NoQuery, strictObject, TenantParams } from '../schemas/common.js';

/** One event of the log (core/events.ts `QuotaEvent`). */
export const QuotaEventSchema = strictObject({
  seq: Type.Integer({ minimum: 1, description: 'its position in the log, increasing in commit order: the cursor' }),
  id: Type.String({ description: 'evt_ and 32 hex digits, derived from what the event is about: the same on every retry (webhook-id)' }),
  key: Type.String({ description: 'what the event is about, as canonical JSON text' }),
  type: Type.Union(EVENT_TYPES.map((type) => Type.Literal(type))),
  tenant: Type.Union([Type.String(), Type.Null()], { description: 'the tenant, null for the plane as a whole' }),
  atMs: Type.Integer({ minimum: 0, maximum: MAX_INSTANT_MS }),
  // Any JSON object; typed as the store types it, so the reply types can be checked against the store's.
  data: Type.Unsafe<Record<string, unknown>>(Type.Object({}, { additionalProperties: true })),
});

const EventsQuery = strictObject({
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'the cursor: events with a greater seq (0, the default: from the first)' })),
  limit: Type.Optional(ListingLimit),
  last: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIST_LIMIT, description: 'instead of after: the newest this many events, the tail to follow from with next' })),
});

/** A page of the event log (plane `EventsPage`). */
export const EventsReply = strictObject({
  events: Type.Array(QuotaEventSchema),
  next: Type.Integer({ minimum: 0, description: 'the cursor to ask with next' }),
  truncated: Type.Boolean({ description: 'more events follow: ask again with next' }),
});

const ThresholdState = strictObject({
  threshold: AlertThreshold,
  label: Type.String({ description: '80%, 5000 tokens, 5000 minorUnits' }),
  amount: Type.Integer({ description: 'the settled amount at which it fires, in the unit' }),
  crossed: Type.Boolean({ description: 'settled spend is at or past it this period' }),
});

/** A tenant's spend alerts for its current period (plane `AlertsStatus`). */
export const AlertsReply = strictObject({
  tenant: Type.String(),
  period: Type.String(),
  ceilings: Type.Array(
    strictObject({
      agent: Type.Union([Type.String(), Type.Null()], { description: "the agent whose ceiling this is; null: the tenant's own" }),
      unit: Type.Union([Type.Literal('tokens'), Type.Literal('minorUnits')]),
      ceiling: Type.Union([Type.Integer(), Type.Null()], { description: 'null: no ceiling in this unit (an absolute threshold still applies)' }),
      settled: Type.Integer(),
      source: Type.Union([Type.Literal('agent'), Type.Literal('tenant'), Type.Literal('plane'), Type.Literal('default')], {
        description: "where the thresholds come from: the agent's own, the tenant's quota, the plane-wide default, or 80 % and 100 %",
      }),
      thresholds: Type.Array(ThresholdState),
    }),
  ),
});

/**
 * The event log (docs/design/rules.md#e8): `GET /v1/events?after=&limit=` reads every event, the
 * plane's and every tenant's, for operator keys of every tenant; `GET /v1/tenants/{tenant}/events`
 * reads one tenant's. Both are oldest first after the cursor `after`, and answer `next`, the
 * cursor to ask with next. `GET /v1/tenants/{tenant}/alerts` answers the tenant's spend
 * thresholds as they stand this period (docs/design/rules.md#e7).
 */
export const eventRoutes: RouteModule = (app, context) => {
  app.get<{ Querystring: Static<typeof EventsQuery> }>(
    '/v1/events',
    protectedRoute('operator-all-tenants', {
      operationId: 'events',
      summary: 'Events of every tenant and of the plane after a cursor, oldest first: spend thresholds crossed, ceilings reached, overruns, stranded runs, halts',
      querystring: EventsQuery,
      reply: EventsReply,
    }),
    async (request) => context.plane.events({ after: request.query.after, limit: request.query.limit, last: request.query.last }),
  );

  app.get<{ Params: Static<typeof TenantParams>; Querystring: Static<typeof EventsQuery> }>(
    '/v1/tenants/:tenant/events',
    protectedRoute('operator', {
      operationId: 'tenantEvents',
      summary: "A tenant's events after a cursor, oldest first",
      params: TenantParams,
      querystring: EventsQuery,
      reply: EventsReply,
    }),
    async (request) => context.plane.events({ tenant: request.params.tenant, after: request.query.after, limit: request.query.limit, last: request.query.last }),
  );

  app.get<{ Params: Static<typeof TenantParams> }>(
    '/v1/tenants/:tenant/alerts',
    protectedRoute('operator', {
      operationId: 'alerts',
      summary: "A tenant's spend-alert thresholds this period: their amounts, where they come from and which are crossed",
      params: TenantParams,
      querystring: NoQuery,
      reply: AlertsReply,
    }),
    async (request) => context.plane.alerts({ tenant: request.params.tenant }),
  );
};
