import type { TSchema } from '@sinclair/typebox';

import type { RouteAccess } from './auth.js';
import { PROBLEM_REPLIES } from './schemas/common.js';

/**
 * What a route that takes an API key declares: its operation id, a one-line summary, its request schemas, its
 * success reply, and the status that reply is sent with (`replyStatus`, default 200; a route that
 * creates something answers 201, and the document must say so).
 */
export interface ProtectedRouteSpec {
  /** The operation's name in /openapi.json, unique: a generated client names its method after it. */
  readonly operationId: string;
  readonly summary: string;
  readonly params?: TSchema;
  readonly querystring?: TSchema;
  readonly body?: TSchema;
  readonly reply: TSchema;
  readonly replyStatus?: 200 | 201;
  /** A second success status answered with the same reply schema (a create that answers 200 when retried). */
  readonly alsoReplyStatus?: 200 | 201;
  /** The media types the body is accepted in, for the document; default `application/json` alone. */
  readonly consumes?: readonly string[];
}

/** The media type of a JSON Merge Patch (RFC 7396), which the PATCH routes accept besides JSON. */
export const MERGE_PATCH_CONTENT_TYPE = 'application/merge-patch+json';

/**
 * The media types a PATCH body is accepted in. Listed in the route schema, where the OpenAPI
 * document reads them; the body keeps one schema (a per-media-type body schema would leave a body
 * of any other type unvalidated).
 */
export const MERGE_PATCH_CONSUMES: readonly string[] = Object.freeze(['application/json', MERGE_PATCH_CONTENT_TYPE]);

/**
 * The Fastify options of a route that takes an API key: `config.access` (checked by the auth hook
 * before the body is read), and a schema with the summary, the request schemas, the success reply,
 * the problem replies every such route shares, the bearer security scheme and an OpenAPI tag
 * (`runner` or `operator`), so every route file says only what is its own.
 */
export function protectedRoute(access: Exclude<RouteAccess, 'public'>, spec: ProtectedRouteSpec) {
  const { reply, replyStatus = 200, alsoReplyStatus, ...request } = spec;
  return {
    config: { access },
    schema: {
      ...request,
      tags: [access === 'runner' ? 'runner' : 'operator'],
      security: [{ bearer: [] }],
      response: { [replyStatus]: reply, ...(alsoReplyStatus === undefined ? {} : { [alsoReplyStatus]: reply }), ...PROBLEM_REPLIES },
    },
  };
}
