import type { FastifyReply, FastifyRequest } from 'fastify';

import { ALL_TENANTS } from '../store/api-keys.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The `code` of the problem this request was answered with (a refusal or a fault), or `null`. */
    problemCode: string | null;
  }
}

/**
 * The one log line of a finished request, beside the `reqId` pino's child
 * logger already carries: the tenant it acted for (path, body or the key's own tenant), the key's
 * id (never its secret), the method and route pattern (never the raw URL, which may hold ids of
 * any length), the status, the refusal or fault code of an error answer, and the latency in ms.
 */
export interface RequestLogLine {
  readonly tenant: string | null;
  readonly keyId: string | null;
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly code: string | null;
  readonly latencyMs: number;
}

/** The {@link RequestLogLine} of `request`, answered with `reply`. */
export function requestLogLine(request: FastifyRequest, reply: FastifyReply): RequestLogLine {
  return {
    tenant: tenantOf(request),
    keyId: request.apiKey?.id ?? null,
    method: request.method,
    route: request.routeOptions.url ?? 'unmatched',
    status: reply.statusCode,
    code: request.problemCode,
    latencyMs: Math.round(reply.elapsedTime * 1000) / 1000,
  };
}

/** The `code` member of a problem+json body, or `null` when the body is not one. */
export function problemCodeOf(payload: string): string | null {
  if (!payload.startsWith('{')) return null;
  try {
    const code = (JSON.parse(payload) as { code?: unknown }).code;
    return typeof code === 'string' ? code : null;
  } catch {
    return null;
  }
}

function tenantOf(request: FastifyRequest): string | null {
  const fromPath = (request.params as { tenant?: unknown } | undefined)?.tenant;
  if (typeof fromPath === 'string') return fromPath;
  const fromBody = (request.body as { tenant?: unknown } | undefined)?.tenant;
  if (typeof fromBody === 'string') return fromBody;
  const keyTenant = request.apiKey?.tenant;
  return keyTenant === undefined || keyTenant === ALL_TENANTS ? null : keyTenant;
}
