import { describe } from '../core/amounts.js';
import { invalidArgument, QuotaError } from '../core/errors.js';
import { haltScopeKey, parseHaltScope, type Halt, type HaltScope } from '../core/halt-scope.js';
import { requireIdentifier } from '../core/identifiers.js';
import type { Operator } from '../core/operator.js';
import type { TenantQuota } from '../core/quota.js';
import type { Refused } from '../core/refusal.js';
import type { LiftedHalt, ListingPage, PlaneListings } from '../plane/listings.js';
import type { AdmitResult, DispatchResult, Plane } from '../plane/plane.js';
import type { Held } from '../store/types.js';
import { decodeProblem } from './problem-decoding.js';

/** The plane's verbs a client serves, with the plane's names and shapes (issue #4 item 5). */
export type PlaneVerbs = Pick<Plane, 'admit' | 'settle' | 'resume' | 'dispatch' | 'usage' | 'setQuota' | 'getQuota' | 'halt' | 'lift' | 'halts'>;

/**
 * A typed client of `quotaplane serve`: the plane's verbs over HTTP, so code written against
 * `createPlane` runs against a server by swapping the object. Refusals come back as the same
 * values (`{ ok: false, refusal, message }`) and faults as the same `QuotaError` codes. `listings`
 * adds the operator listings (slot holders, holds, recorded lifts, tenants).
 *
 * Differences from a local plane, by design:
 * - the operator recorded for `halt`, `lift` and `setQuota` is the key's name with basis
 *   `authenticated`; a `by` argument is not sent;
 * - `atMs` is accepted only from an operator key (the server refuses it from a runner key);
 * - a server that cannot be reached throws `STORE_UNAVAILABLE` (fail closed): nothing is known to
 *   have been decided, so retry; pass your own `run` id to `admit` to make a retry idempotent.
 */
export interface QuotaplaneClient extends PlaneVerbs {
  /** The server's base URL, as given. */
  readonly url: string;
  /** The operator listings (operator keys only). */
  readonly listings: PlaneListings;
}

/**
 * Options of {@link createClient}: `url` the server's base URL (`http://127.0.0.1:7070`), `key` an
 * API key (`qp_…`) sent as `Authorization: Bearer`, `fetch` the fetch to use (default the global
 * one; tests pass one that calls `app.inject`).
 */
export interface ClientOptions {
  readonly url: string;
  readonly key: string;
  readonly fetch?: typeof globalThis.fetch | undefined;
}

interface HaltView {
  readonly scope: string;
  readonly reason: string;
  readonly by: Operator;
  readonly atMs: number;
}

/**
 * Builds a {@link QuotaplaneClient}. Throws `INVALID_ARGUMENT` naming `url` or `key` when one is
 * malformed; nothing is sent until a method is called.
 *
 * @example
 * const plane = createClient({ url: 'http://127.0.0.1:7070', key: process.env.QUOTAPLANE_KEY! });
 * const pass = await plane.admit({ tenant: 'acme', budget: { maxTokens: 10_000, maxCallTokens: 500 } });
 * if (!pass.ok) console.log(pass.message);
 */
export function createClient(options: ClientOptions): QuotaplaneClient {
  const base = baseUrl(options.url);
  if (typeof options.key !== 'string' || options.key.trim() === '') {
    throw invalidArgument('key', `must be an API key from 'quotaplane keys create', got ${describe(options.key)}`);
  }
  const doFetch = options.fetch ?? globalThis.fetch;
  const authorization = `Bearer ${options.key}`;

  async function call<T>(method: string, path: string, body?: unknown): Promise<T | Refused> {
    const headers: Record<string, string> = { authorization, accept: 'application/json, application/problem+json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await doFetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    } catch (error) {
      throw unreachable(base, error);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw unreachable(base, error);
    }
    const parsed = parseJson(text);
    if (response.ok) {
      if (parsed === undefined) {
        throw new QuotaError('INTERNAL', `the quotaplane server at ${base} answered ${method} ${path} with a body that is not JSON`);
      }
      return parsed as T;
    }
    const decoded = decodeProblem(response.status, parsed);
    if (decoded.kind === 'fault') throw decoded.error;
    return decoded.refused;
  }
  // Verbs that never refuse still pass a refusal through untouched, should a newer server answer one.
  const value = <T>(path: string, method: string, body?: unknown) => call<T>(method, path, body) as Promise<T>;

  const tenantPath = (tenant: unknown, rest: string) => `/v1/tenants/${encodeURIComponent(requireIdentifier('tenant', tenant))}${rest}`;
  const runPath = (run: unknown, rest: string) => `/v1/runs/${encodeURIComponent(requireIdentifier('run', run))}${rest}`;
  const limitQuery = (options?: { limit?: number | undefined }) =>
    options?.limit === undefined ? '' : `?limit=${encodeURIComponent(String(options.limit))}`;

  const listings: PlaneListings = Object.freeze({
    tenants: async () => (await value<{ tenants: string[] }>('/v1/tenants', 'GET')).tenants,
    slotHolders: async (tenant: string, options?: { limit?: number | undefined }): Promise<ListingPage<string>> => {
      const reply = await value<{ runs: string[]; truncated: boolean }>(tenantPath(tenant, `/runs${limitQuery(options)}`), 'GET');
      return { items: reply.runs, truncated: reply.truncated };
    },
    reservations: async (tenant: string, options?: { limit?: number | undefined }): Promise<ListingPage<Held>> => {
      const reply = await value<{ reservations: Held[]; truncated: boolean }>(
        tenantPath(tenant, `/reservations${limitQuery(options)}`),
        'GET',
      );
      return { items: reply.reservations, truncated: reply.truncated };
    },
    liftedHalts: async (tenant: string, options?: { limit?: number | undefined }): Promise<ListingPage<LiftedHalt>> => {
      const query = options?.limit === undefined ? '?state=lifted' : `?state=lifted&limit=${encodeURIComponent(String(options.limit))}`;
      const reply = await value<{ lifted: LiftedHalt[]; truncated: boolean }>(tenantPath(tenant, `/halts${query}`), 'GET');
      return { items: reply.lifted, truncated: reply.truncated };
    },
  });

  const client: QuotaplaneClient = {
    url: base,
    listings,
    admit: (input) => call('POST', '/v1/runs', requestBody(input)) as Promise<AdmitResult>,
    settle: (input) => {
      const { run, ...body } = requestBody(input);
      return value(runPath(run, '/settle'), 'POST', body);
    },
    resume: (input) => {
      const { run, ...body } = requestBody(input);
      return value(runPath(run, '/resume'), 'POST', body);
    },
    dispatch: (input) => {
      const { run, ...body } = requestBody(input);
      return call('POST', runPath(run, '/dispatches'), body) as Promise<DispatchResult>;
    },
    usage: (input) => {
      const { tenant, period } = requestBody(input);
      const query = new URLSearchParams();
      if (tenant !== undefined) query.set('tenant', requireIdentifier('tenant', tenant));
      if (period !== undefined) query.set('period', String(period));
      return value(`/v1/usage${query.size === 0 ? '' : `?${query.toString()}`}`, 'GET');
    },
    setQuota: async (tenant, quota: TenantQuota) =>
      (await value<{ quota: TenantQuota }>(tenantPath(tenant, '/quota'), 'PUT', quota)).quota,
    getQuota: async (tenant) => (await value<{ quota: TenantQuota | null }>(tenantPath(tenant, '/quota'), 'GET')).quota,
    halt: (input) => {
      const { tenant, scope, reason, atMs } = requestBody(input);
      return value(tenantPath(tenant, '/halts'), 'POST', { scope: scopeKey(scope), reason, atMs });
    },
    lift: (input) => {
      const { tenant, scope, atMs } = requestBody(input);
      return value(tenantPath(tenant, '/halts/lift'), 'POST', { scope: scopeKey(scope), atMs });
    },
    halts: async (tenant): Promise<Halt[]> => {
      const reply = await value<{ halts: HaltView[] }>(tenantPath(tenant, '/halts'), 'GET');
      return reply.halts.map((view) => {
        const scope = parseHaltScope(view.scope);
        if (scope === null) throw new QuotaError('INTERNAL', `the quotaplane server listed a halt with an unreadable scope ${JSON.stringify(view.scope)}`);
        return { scope, reason: view.reason, by: view.by, atMs: view.atMs };
      });
    },
  };
  return Object.freeze(client);
}

function baseUrl(url: unknown): string {
  if (typeof url !== 'string') throw invalidArgument('url', `must be the server's base URL, such as http://127.0.0.1:7070, got ${describe(url)}`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidArgument('url', `must be the server's base URL, such as http://127.0.0.1:7070, got ${describe(url)}`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw invalidArgument('url', `must be an http:// or https:// URL, got ${describe(url)}`);
  }
  return url.replace(/\/+$/, '');
}

// The plane validates its request object first; so does the client, before anything is sent.
function requestBody(input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidArgument('request', `must be an object, got ${describe(input)}`);
  }
  return { ...(input as Record<string, unknown>) };
}

// A HaltScope value travels as its key string, the HTTP spelling of a scope.
function scopeKey(scope: unknown): unknown {
  if (typeof scope === 'object' && scope !== null && typeof (scope as { kind?: unknown }).kind === 'string') {
    try {
      return haltScopeKey(scope as HaltScope);
    } catch {
      return scope;
    }
  }
  return scope;
}

function parseJson(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function unreachable(url: string, error: unknown): QuotaError {
  const text = error instanceof Error ? error.message : String(error);
  return new QuotaError(
    'STORE_UNAVAILABLE',
    `the quotaplane server at ${url} could not be reached (${text}); nothing is known to have been decided, retry later`,
    { details: { url }, cause: error },
  );
}
