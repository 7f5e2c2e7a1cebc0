import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

import { requestKey } from '../auth.js';
import { HttpProblem } from '../errors.js';
import { clearedSessionCookie, newSessionToken, sessionCookie, sessionTokenOf, SESSION_TTL_MS } from '../key-session.js';
import { hashApiKey } from '../api-key-secret.js';
import type { RouteModule } from '../route-context.js';
import { protectedRoute } from '../route-options.js';
import { NoQuery, strictObject } from '../schemas/common.js';
import { storeCall } from '../../plane/store-call.js';

const SessionReply = strictObject({
  id: Type.String({ description: 'the id of the key the session acts as' }),
  name: Type.String(),
  role: Type.Union([Type.Literal('runner'), Type.Literal('operator')]),
  tenant: Type.String({ description: "the tenant the key acts for, or '*' for every tenant" }),
  expiresAtMs: Type.Integer({ description: 'when the session ends (Unix ms), unless signed out or its key ends first' }),
});
const EndedReply = strictObject({ ended: Type.Boolean({ description: 'true when a session was ended; false when the request had none live' }) });

// Over TLS the cookie is Secure: the socket's own, or a TLS proxy's in front (`serve` speaks plain
// HTTP behind one), which the browser's Origin of the page says. Secure only narrows where the
// cookie goes, so a client claiming an https Origin gains nothing.
const overTls = (request: FastifyRequest) => request.protocol === 'https' || /^https:\/\//i.test(request.headers.origin ?? '');

/**
 * Dashboard sessions (key-session.ts): `POST /v1/session`, sent with an operator key as the bearer
 * header, answers who the key is and sets the session cookie (HttpOnly, SameSite=Strict, Path=/v1,
 * Secure over TLS) that the dashboard then uses instead of the key; `DELETE /v1/session` ends the
 * session of the cookie it is sent with, for every server on the store, and removes the cookie.
 */
export const sessionRoutes: RouteModule = (app, context) => {
  app.post(
    '/v1/session',
    protectedRoute('operator', {
      operationId: 'startSession',
      summary: "Sign the dashboard in: send an operator key as the bearer header; the answer sets a session cookie (two hours) that stands for it",
      querystring: NoQuery,
      reply: SessionReply,
    }),
    async (request, reply) => {
      if (request.headers.authorization === undefined) {
        throw new HttpProblem('UNAUTHENTICATED', "a session is started with an operator key: send 'Authorization: Bearer <key>'");
      }
      const key = requestKey(request);
      const createdAtMs = context.clock.nowMs();
      // A session never outlives its key.
      const expiresAtMs = Math.min(createdAtMs + SESSION_TTL_MS, key.expiresAtMs ?? Number.MAX_SAFE_INTEGER);
      const { token, hash } = newSessionToken();
      await storeCall('createSession', () => context.keys.createSession({ hash, keyId: key.id, createdAtMs, expiresAtMs }));
      reply.header('set-cookie', sessionCookie(token, expiresAtMs - createdAtMs, overTls(request)));
      reply.header('cache-control', 'no-store');
      return { id: key.id, name: key.name, role: key.role, tenant: key.tenant, expiresAtMs };
    },
  );
  app.delete(
    '/v1/session',
    protectedRoute('runner', {
      operationId: 'endSession',
      summary: 'Sign the dashboard out: ends the session of the cookie sent, for every server on the store, and removes the cookie',
      querystring: NoQuery,
      reply: EndedReply,
    }),
    async (request, reply) => {
      const token = sessionTokenOf(request.headers.cookie);
      const ended = token === null ? false : await storeCall('endSession', () => context.keys.endSession(hashApiKey(token)));
      reply.header('set-cookie', clearedSessionCookie(overTls(request)));
      return { ended };
    },
  );
};
