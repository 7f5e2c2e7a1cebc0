import type { TSchema } from '@sinclair/typebox';

import type { RouteAccess } from './auth.js';
import { PROBLEM_REPLIES } from './schemas/common.js';

/** What a route that takes an API key declares: a one-line summary, its request schemas and its 200 reply. */
export interface ProtectedRouteSpec {
  readonly summary: string;
  readonly params?: TSchema;
  readonly querystring?: TSchema;
  readonly body?: TSchema;
  readonly reply: TSchema;
}

/**
 * The Fastify options of a route that takes an API key: `config.access` (checked by the auth hook
 * before the body is read), and a schema with the summary, the request schemas, the 200 reply,
 * the problem replies every such route shares, the bearer security scheme and an OpenAPI tag
 * (`runner` or `operator`), so every route file says only what is its own.
 */
export function protectedRoute(access: Exclude<RouteAccess, 'public'>, spec: ProtectedRouteSpec) {
  const { reply, ...request } = spec;
  return {
    config: { access },
    schema: {
      ...request,
      tags: [access === 'runner' ? 'runner' : 'operator'],
      security: [{ bearer: [] }],
      response: { 200: reply, ...PROBLEM_REPLIES },
    },
  };
}
