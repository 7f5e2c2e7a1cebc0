import { Type, type Static } from '@sinclair/typebox';

import { MAX_KEY_DURATION_MS, storeApiKeyAdmin, type ApiKeyAdmin } from '../../plane/api-key-admin.js';
import { MAX_IDENTIFIER_LENGTH } from '../../core/identifiers.js';
import { keyCoversTenant } from '../../store/api-keys.js';
import { mintApiKey } from '../api-key-secret.js';
import { operatorOf, requestKey } from '../auth.js';
import { HttpProblem, notFoundProblem } from '../errors.js';
import type { RouteContext, RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { described, Identifier, NewTenantQuery, NoQuery, strictObject } from '../schemas/common.js';
import type { FastifyRequest } from 'fastify';

const Role = Type.Union([Type.Literal('runner'), Type.Literal('operator')], {
  description: "runner: the run verbs, for its own tenant; operator: the operator routes too, for the tenant it names, or every tenant with '*'",
});

/** An API key as listed, never its secret (store `ApiKeyRecord`). */
export const KeyRecord = strictObject({
  id: Type.String(),
  name: Type.String(),
  role: Role,
  tenant: Type.String(),
  createdAtMs: Type.Integer(),
  revokedAtMs: Type.Union([Type.Integer(), Type.Null()]),
  expiresAtMs: Type.Union([Type.Integer(), Type.Null()], { description: 'Unix ms from which the key is refused (401); null: it never expires' }),
  lastUsedAtMs: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Unix ms of a request it authenticated, coarse: each server records it at most once a minute per key; null: not recorded yet',
  }),
});

const DurationMs = (description: string, minimum: number) => Type.Integer({ minimum, maximum: MAX_KEY_DURATION_MS, description });

const CreateKeyBody = strictObject({
  tenant: Type.String({ minLength: 1, maxLength: MAX_IDENTIFIER_LENGTH, description: "the tenant the key acts for, or '*' for every tenant (operator keys only)" }),
  role: Role,
  name: Type.Optional(described(Identifier, 'a name for the key: audit rows of what it does record it as the operator; default its id')),
  expiresInMs: Type.Optional(DurationMs("the key expires this many ms after it is made (the server's clock); absent: never", 1)),
});
const RotateKeyBody = strictObject({
  overlapMs: DurationMs('how long the old key stays valid, in ms (0: it expires now); never longer than it already would', 0),
  expiresInMs: Type.Optional(DurationMs("the new key expires this many ms after it is made; default the old key's lifetime, or never", 1)),
});

/** A key just created, with its secret (plane `CreatedApiKey`). */
export const CreatedKey = strictObject({ ...KeyRecord.properties, key: Type.String({ description: 'the key itself, shown only in this answer' }) });
const KeyList = strictObject({ keys: Type.Array(KeyRecord) });
const KeyParams = strictObject({ id: Type.String({ minLength: 1, maxLength: 64, description: 'the key id (key_…), as GET /v1/keys lists it' }) });
export const RotateReply = strictObject({
  created: CreatedKey,
  old: strictObject({ id: Type.String(), expiresAtMs: Type.Integer({ description: 'when the old key stops being accepted (Unix ms)' }) }),
});
const RevokeReply = strictObject({ id: Type.String(), outcome: Type.Union([Type.Literal('revoked'), Type.Literal('already-revoked')]) });

// The keys the calling operator key may manage: those of the tenants it covers (every key for an
// operator key of every tenant), recorded under its own name.
function adminFor(request: FastifyRequest, context: RouteContext): ApiKeyAdmin {
  const caller = requestKey(request);
  return storeApiKeyAdmin({
    store: context.store,
    keys: context.keys,
    by: operatorOf(request),
    mint: mintApiKey,
    nowMs: () => context.clock.nowMs(),
    covers: (keyTenant) => keyCoversTenant(caller, keyTenant),
  });
}

/**
 * API keys over HTTP, operator keys only: `POST /v1/keys` creates one and
 * answers its secret once (201); `GET /v1/keys` lists the keys of the tenants the calling key
 * covers (never a secret); `POST /v1/keys/{id}/revoke` revokes one; `POST /v1/keys/{id}/rotate` replaces one, the old one
 * expiring after the overlap. A key for a tenant the caller
 * does not cover, or for every tenant from a one-tenant operator key, answers 404 as any uncovered
 * tenant does. A key for a tenant that does not exist answers 404 naming it and the nearest known
 * tenant, unless `?newTenant=true` (docs/design/rules.md#l95). Creation and revocation are audited
 * (`key.create`, `key.revoke`) under the calling key's name, authenticated, before the key changes.
 */
export const keyRoutes: RouteModule = (app, context) => {
  app.post<{ Body: Static<typeof CreateKeyBody>; Querystring: Static<typeof NewTenantQuery> }>(
    '/v1/keys',
    {
      ...protectedRoute('operator', {
        operationId: 'createKey',
        summary: 'Create an API key; its secret is in this answer only (audited as key.create; a tenant that does not exist needs ?newTenant=true)',
        querystring: NewTenantQuery,
        body: CreateKeyBody,
        reply: CreatedKey,
        replyStatus: 201,
      }),
    },
    async (request, reply) => {
      if (!keyCoversTenant(requestKey(request), request.body.tenant)) throw notFoundProblem();
      const created = await adminFor(request, context).create({ ...request.body, newTenant: request.query.newTenant });
      return reply.code(201).send(created);
    },
  );
  app.get(
    '/v1/keys',
    protectedRoute('operator', { operationId: 'listKeys', summary: 'The API keys of the tenants this key covers, revoked ones included (never a secret)', querystring: NoQuery, reply: KeyList }),
    async (request) => ({ keys: await adminFor(request, context).list() }),
  );
  app.post<{ Params: Static<typeof KeyParams> }>(
    '/v1/keys/:id/revoke',
    protectedRoute('operator', {
      operationId: 'revokeKey',
      summary: 'Revoke an API key: every request with it answers 401 from now on (audited as key.revoke)',
      params: KeyParams,
      reply: RevokeReply,
    }),
    async (request) => {
      const revoked = await adminFor(request, context).revoke(request.params.id);
      if (revoked.outcome === 'not-found') throw new HttpProblem('NOT_FOUND', `no key ${request.params.id} that this key may manage`);
      return revoked;
    },
  );
  app.post<{ Params: Static<typeof KeyParams>; Body: Static<typeof RotateKeyBody> }>(
    '/v1/keys/:id/rotate',
    protectedRoute('operator', {
      operationId: 'rotateKey',
      summary: 'Rotate an API key: a new key with its name, role and tenant (secret in this answer only); the old one expires after overlapMs (audited as key.rotate and key.create)',
      params: KeyParams,
      body: RotateKeyBody,
      reply: RotateReply,
    }),
    async (request) => adminFor(request, context).rotate(request.params.id, request.body),
  );
};
