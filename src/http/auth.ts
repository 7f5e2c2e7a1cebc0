import type { FastifyRequest } from 'fastify';

import type { Operator } from '../core/operator.js';
import { ALL_TENANTS, keyCoversTenant, keyExpired, type ApiKeyRecord, type ApiKeyStore } from '../store/api-keys.js';
import { API_KEY_PREFIX, hashApiKey } from './api-key-secret.js';
import { badInput, HttpProblem, notFoundProblem } from './errors.js';
import { sessionKey, sessionTokenOf } from './key-session.js';

/**
 * Who may call a route, set per route as `config.access`:
 * - `public`: anyone (`/healthz`, `/readyz`, `/openapi.json`);
 * - `runner`: any key; a runner key acts for its own tenant only, an operator key for a tenant it covers;
 * - `operator`: operator keys only, for a `{tenant}` they cover;
 * - `operator-all-tenants`: operator keys for every tenant (`/metrics`, which names every tenant).
 * A key that may not use a route gets 404, the same answer as a tenant it does not cover, so a
 * runner key cannot even learn which operator paths exist behind it (404 rather than
 * 403, and documented so).
 */
export type RouteAccess = 'public' | 'runner' | 'operator' | 'operator-all-tenants';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may call the route; absent means `public`. */
    access?: RouteAccess;
  }
  interface FastifyRequest {
    /** The authenticated key, set before validation on every non-public route; `null` on public ones. */
    apiKey: ApiKeyRecord | null;
  }
}

// Longer than any key we mint by far; a longer token is refused before it is hashed.
const MAX_TOKEN_LENGTH = 512;

/**
 * The key behind an `Authorization: Bearer <key>` header. Throws `UNAUTHENTICATED` (401) when the
 * header is missing or malformed, or the key is unknown or revoked, without saying which, so a
 * guesser learns nothing. A key past its `expiresAtMs` at `nowMs` is refused saying it expired and
 * when: only its holder can send it. Only the SHA-256 of the key is looked up; the key is never
 * logged. Without the header, a dashboard session cookie (`session`, key-session.ts) stands for
 * its key, with the same checks of the key.
 */
export async function authenticate(
  header: string | undefined,
  keys: ApiKeyStore,
  nowMs: number = Date.now(),
  session?: { readonly cookie: string | undefined; readonly method: string; readonly csrf: string | string[] | undefined },
): Promise<ApiKeyRecord> {
  const sessionToken = header === undefined && session !== undefined ? sessionTokenOf(session.cookie) : null;
  if (sessionToken !== null && session !== undefined) return usable(await sessionKey(sessionToken, keys, nowMs, session.method, session.csrf), nowMs);
  const match = header === undefined ? null : /^Bearer +(\S+) *$/i.exec(header);
  const token = match?.[1];
  if (token === undefined) {
    throw new HttpProblem('UNAUTHENTICATED', "send 'Authorization: Bearer <key>' with a key from 'quotaplane keys create'");
  }
  if (!token.startsWith(API_KEY_PREFIX) || token.length > MAX_TOKEN_LENGTH) throw refusedKey();
  const key = await keys.findByHash(hashApiKey(token));
  if (key === null) throw refusedKey();
  return usable(key, nowMs);
}

function usable(key: ApiKeyRecord, nowMs: number): ApiKeyRecord {
  if (key.revokedAtMs !== null) throw refusedKey();
  if (keyExpired(key, nowMs)) throw expiredKey(key);
  return key;
}

function expiredKey(key: ApiKeyRecord): HttpProblem {
  const at = new Date(key.expiresAtMs ?? 0).toISOString();
  return new HttpProblem('UNAUTHENTICATED', `the API key ${key.id} expired at ${at}; ask an operator for a new key ('quotaplane keys create' or 'keys rotate')`);
}

function refusedKey(): HttpProblem {
  return new HttpProblem('UNAUTHENTICATED', "the API key is not accepted (unknown or revoked); ask an operator for a key from 'quotaplane keys create'");
}

/**
 * The 404 an operator key of one tenant gets from a route over every tenant (`/v1/plane`,
 * `/metrics`): still no answer, but the detail says which key would get one (an operator knows
 * these routes exist; a runner key is answered as for any operator route).
 */
function needsEveryTenantKey(tenant: string): HttpProblem {
  return new HttpProblem(
    'NOT_FOUND',
    `this route covers every tenant and answers only an operator key of every tenant (tenant '${ALL_TENANTS}'); this key is ` +
      `an operator key of tenant '${tenant}' only: use an operator key of every tenant (quotaplane keys create --tenant '${ALL_TENANTS}' --role operator)`,
  );
}

/**
 * Checks that `key` may use a route of `access` for the path's `tenant` (when the path has one).
 * Throws the 404 of {@link notFoundProblem} otherwise (saying which key is needed when an operator key of one
 * tenant asks a route over every tenant).
 */
export function authorize(access: Exclude<RouteAccess, 'public'>, key: ApiKeyRecord, pathTenant: string | undefined): void {
  if (access === 'operator' && key.role !== 'operator') throw notFoundProblem();
  if (access === 'operator-all-tenants' && key.role !== 'operator') throw notFoundProblem();
  if (access === 'operator-all-tenants' && key.tenant !== ALL_TENANTS) throw needsEveryTenantKey(key.tenant);
  if (pathTenant !== undefined && !keyCoversTenant(key, pathTenant)) throw notFoundProblem();
}

/** The authenticated key of a non-public route (set by the auth hook). */
export function requestKey(request: FastifyRequest): ApiKeyRecord {
  const key = request.apiKey;
  // The auth hook runs before every non-public handler; reaching here without a key is a bug.
  if (key === null) throw new Error('a protected route ran without an authenticated key');
  return key;
}

/**
 * The tenant a runner route acts for: the tenant comes from the key, never from
 * the body. A runner key's tenant is its own; a body or query `tenant` may repeat it, and any
 * other tenant is 404. An operator key acts for the `tenant` named, which it must cover (404
 * otherwise); an operator key of one tenant defaults to it, an all-tenant key must name one (400).
 */
export function actingTenant(request: FastifyRequest, named: string | undefined): string {
  const key = requestKey(request);
  if (named === undefined) {
    if (key.tenant === ALL_TENANTS) {
      throw badInput('tenant', 'is required with an operator key for every tenant: name the tenant this call acts for');
    }
    return key.tenant;
  }
  if (!keyCoversTenant(key, named)) throw notFoundProblem();
  return named;
}

/**
 * The tenants an operator route that may span tenants acts for (`GET /v1/attention`,
 * `POST /v1/sweep`): the `tenant` named, which the key must cover (404 otherwise); else, for an
 * operator key of every tenant, `undefined` (every tenant); else the key's own tenant.
 */
export function operatorScope(request: FastifyRequest, named: string | undefined): string | undefined {
  const key = requestKey(request);
  if (named !== undefined) {
    if (!keyCoversTenant(key, named)) throw notFoundProblem();
    return named;
  }
  return key.tenant === ALL_TENANTS ? undefined : key.tenant;
}

/**
 * An instant a caller supplies (`atMs`). Only operator keys may supply one: a runner could
 * otherwise backdate a dispatch out of its rate window or its spend into a closed period.
 * Operators already set ceilings and lift halts, so letting them drive time (replays, backfills)
 * gives them nothing new. A runner key sending `atMs` gets 400 naming it.
 */
export function callerInstant(request: FastifyRequest, atMs: number | undefined): number | undefined {
  if (atMs !== undefined && requestKey(request).role !== 'operator') {
    throw badInput('atMs', "only an operator key may supply the instant; leave atMs out and the server's clock decides");
  }
  return atMs;
}

/**
 * A compensating dispatch (`exempt: true`) counts without checking any ceiling. Only an operator
 * key may send `exempt` (either value), as with `atMs`: a runner key could otherwise dispatch past
 * every rate ceiling by asking. A runner key sending it gets 400 naming `exempt`.
 */
export function callerExempt(request: FastifyRequest, exempt: boolean | undefined): boolean | undefined {
  if (exempt !== undefined && requestKey(request).role !== 'operator') {
    throw badInput(
      'exempt',
      'only an operator key may send exempt: a compensating dispatch needs an operator key, or the library (createPlane); leave exempt out to count against the ceilings',
    );
  }
  return exempt;
}

/** The operator recorded for halts, lifts and quota changes made through HTTP: the key's name, authenticated. */
export function operatorOf(request: FastifyRequest): Operator {
  return { actor: requestKey(request).name, basis: 'authenticated' };
}
