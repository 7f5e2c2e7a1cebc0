import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

import { EVENT_TYPES } from '../../core/events.js';
import { MAX_IDENTIFIER_LENGTH } from '../../core/identifiers.js';
import { DELIVERY_STATUSES } from '../../core/webhook-retry.js';
import { createWebhooks, MAX_DELIVERY_PAGE, MAX_ROTATION_OVERLAP_MS, requireDeliveryId, type WebhookAdmin } from '../../plane/webhooks.js';
import { keyCoversTenant, ALL_TENANTS } from '../../store/api-keys.js';
import { requestKey } from '../auth.js';
import { notFoundProblem } from '../errors.js';
import type { RouteContext, RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { NoQuery, strictObject } from '../schemas/common.js';
import { QuotaEventSchema } from './events.js';

const EventType = Type.Union(EVENT_TYPES.map((type) => Type.Literal(type)));
const Tenant = Type.Union([Type.String({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH }), Type.Null()], {
  description: "the tenant whose events it receives; null: every tenant's events and the plane's (operator keys of every tenant only)",
});

/** An endpoint as listed: never a secret, only each secret's life (plane `WebhookEndpointView`). */
export const WebhookEndpointSchema = strictObject({
  id: Type.String({ description: 'wh_<ULID>' }),
  tenant: Tenant,
  url: Type.String(),
  eventTypes: Type.Union([Type.Array(EventType), Type.Null()], { description: 'the event types it receives; null: all' }),
  createdAtMs: Type.Integer(),
  secrets: Type.Array(
    strictObject({
      addedAtMs: Type.Integer(),
      expiresAtMs: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix ms from which it no longer signs; null: never' }),
    }),
    { description: 'the signing secrets, newest first, without the secrets themselves' },
  ),
});

const IssuedReply = strictObject({
  endpoint: WebhookEndpointSchema,
  secret: Type.String({ description: 'whsec_ and base64 of 32 random bytes: the signing secret, shown only in this answer' }),
});

const AddBody = strictObject({
  tenant: Tenant,
  url: Type.String({ minLength: 1, maxLength: 2048, description: 'an absolute http:// or https:// URL' }),
  eventTypes: Type.Optional(Type.Union([Type.Array(EventType, { minItems: 1 }), Type.Null()], { description: 'omitted or null: every type' })),
});
const ListQuery = strictObject({
  tenant: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH, description: 'only the endpoints of this tenant' })),
});
const EndpointParams = strictObject({ id: Type.String({ minLength: 1, maxLength: 64, description: 'the endpoint id (wh_…), as GET /v1/webhooks lists it' }) });
const DeliveryParams = strictObject({
  id: Type.String({ minLength: 1, maxLength: 96, description: 'the delivery id (wh_….<event seq>), as the deliveries listing answers it' }),
});
const RotateBody = strictObject({
  overlapMs: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_ROTATION_OVERLAP_MS, description: 'how long the secrets signing now keep signing, in ms (0: they end now); default 86 400 000 (24 h)' }),
  ),
});
const DeliveriesQuery = strictObject({
  status: Type.Optional(Type.Union(DELIVERY_STATUSES.map((status) => Type.Literal(status)), { description: 'only the deliveries in this status: pending, delivered or failed' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_DELIVERY_PAGE, description: `most deliveries to answer, 1 to ${MAX_DELIVERY_PAGE}; default 100` })),
});

/** One delivery (store `WebhookDelivery`). */
export const WebhookDeliverySchema = strictObject({
  id: Type.String(),
  endpointId: Type.String(),
  event: QuotaEventSchema,
  status: Type.Union(DELIVERY_STATUSES.map((status) => Type.Literal(status))),
  attempts: Type.Integer({ description: 'attempts made (counted from 0 again by a resend)' }),
  dueAtMs: Type.Integer({ description: 'when it may next be attempted (Unix ms)' }),
  createdAtMs: Type.Integer(),
  lastAttemptAtMs: Type.Union([Type.Integer(), Type.Null()]),
  lastResult: Type.Union([Type.String(), Type.Null()], { description: 'what the last attempt met: HTTP 503, a timeout, a network error' }),
  deliveredAtMs: Type.Union([Type.Integer(), Type.Null()]),
});

function admin(context: RouteContext): WebhookAdmin {
  return createWebhooks({ store: context.store, clock: context.clock });
}

// A tenant's endpoints are the business of operator keys covering it; plane-wide ones of keys of every tenant.
function covers(request: FastifyRequest, tenant: string | null): boolean {
  return keyCoversTenant(requestKey(request), tenant ?? ALL_TENANTS);
}

async function coveredEndpoint(request: FastifyRequest, context: RouteContext, id: string): Promise<void> {
  const endpoint = await admin(context).get(id);
  if (!covers(request, endpoint.tenant)) throw notFoundProblem();
}

/**
 * Webhook endpoints and their deliveries over HTTP, operator keys only (docs/design/rules.md#h1–#h13,
 * docs/guides/webhooks.md): `POST /v1/webhooks` adds one and answers its secret once (201);
 * `GET /v1/webhooks` lists those of the tenants the key covers; `DELETE /v1/webhooks/{id}` removes
 * one with its deliveries; `POST /v1/webhooks/{id}/rotate` adds a new secret, the old ones signing
 * until the overlap ends; `GET /v1/webhooks/{id}/deliveries?status=` lists deliveries;
 * `POST /v1/webhooks/deliveries/{id}/resend` makes a failed one due again under the same
 * webhook-id. An endpoint of a tenant the key does not cover answers 404, as any uncovered tenant does.
 */
export const webhookRoutes: RouteModule = (app, context) => {
  app.post<{ Body: Static<typeof AddBody> }>(
    '/v1/webhooks',
    protectedRoute('operator', {
      operationId: 'addWebhook',
      summary: 'Add a webhook endpoint; it receives events from now on (no history), signed with the secret in this answer only (H1, H8)',
      querystring: NoQuery,
      body: AddBody,
      reply: IssuedReply,
      replyStatus: 201,
    }),
    async (request, reply) => {
      if (!covers(request, request.body.tenant)) throw notFoundProblem();
      return reply.code(201).send(await admin(context).add(request.body));
    },
  );
  app.get<{ Querystring: Static<typeof ListQuery> }>(
    '/v1/webhooks',
    protectedRoute('operator', {
      operationId: 'listWebhooks',
      summary: 'The webhook endpoints of the tenants this key covers, oldest first (never a secret)',
      querystring: ListQuery,
      reply: strictObject({ webhooks: Type.Array(WebhookEndpointSchema) }),
    }),
    async (request) => {
      const listed = await admin(context).list(request.query.tenant);
      return { webhooks: listed.filter((endpoint) => covers(request, endpoint.tenant)) };
    },
  );
  app.delete<{ Params: Static<typeof EndpointParams> }>(
    '/v1/webhooks/:id',
    protectedRoute('operator', {
      operationId: 'removeWebhook',
      summary: 'Remove a webhook endpoint and its deliveries',
      params: EndpointParams,
      querystring: NoQuery,
      reply: strictObject({ id: Type.String(), removed: Type.Literal(true) }),
    }),
    async (request) => {
      await coveredEndpoint(request, context, request.params.id);
      await admin(context).remove(request.params.id);
      return { id: request.params.id, removed: true as const };
    },
  );
  app.post<{ Params: Static<typeof EndpointParams>; Body: Static<typeof RotateBody> }>(
    '/v1/webhooks/:id/rotate',
    protectedRoute('operator', {
      operationId: 'rotateWebhookSecret',
      summary: 'Add a new signing secret (in this answer only); the secrets signing now keep signing until overlapMs has passed (H10)',
      params: EndpointParams,
      body: RotateBody,
      reply: IssuedReply,
    }),
    async (request) => {
      await coveredEndpoint(request, context, request.params.id);
      return admin(context).rotate(request.params.id, request.body.overlapMs);
    },
  );
  app.get<{ Params: Static<typeof EndpointParams>; Querystring: Static<typeof DeliveriesQuery> }>(
    '/v1/webhooks/:id/deliveries',
    protectedRoute('operator', {
      operationId: 'listWebhookDeliveries',
      summary: "An endpoint's deliveries, newest event first, of one status when asked (H11)",
      params: EndpointParams,
      querystring: DeliveriesQuery,
      reply: strictObject({ deliveries: Type.Array(WebhookDeliverySchema) }),
    }),
    async (request) => {
      await coveredEndpoint(request, context, request.params.id);
      return { deliveries: await admin(context).deliveries(request.params.id, request.query) };
    },
  );
  app.post<{ Params: Static<typeof DeliveryParams> }>(
    '/v1/webhooks/deliveries/:id/resend',
    protectedRoute('operator', {
      operationId: 'resendWebhookDelivery',
      summary: 'Make a failed (or delivered) delivery due now again, under the same webhook-id (H12); 409 while it is pending',
      params: DeliveryParams,
      reply: WebhookDeliverySchema,
    }),
    async (request) => {
      // The delivery id first: its endpoint part is checked as an endpoint id only once it is one.
      await coveredEndpoint(request, context, requireDeliveryId(request.params.id).split('.')[0]!);
      return admin(context).resend(request.params.id);
    },
  );
};
