import { describe } from '../core/amounts.js';
import type { CallCeilings } from '../core/call-ceilings.js';
import type { CallRefusal } from '../core/call-refusal.js';
import type { CallReservation } from '../core/lifecycle/call-books.js';
import type { SubjectStanding } from '../core/lifecycle/call-standings.js';
import type { CallEnded, ReserveCallOutcome } from '../core/lifecycle/model-calls.js';
import { invalidArgument, isQuotaError, QuotaError } from '../core/errors.js';
import { haltScopeKey, parseHaltScope, type Halt, type HaltScope } from '../core/halt-scope.js';
import { requireIdentifier, RESERVED_AUDIT_CHAINS } from '../core/identifiers.js';
import type { Operator } from '../core/operator.js';
import type { TenantQuota, TenantQuotaInput } from '../core/quota.js';
import type { PlaneCeiling } from '../core/plane-ceiling.js';
import type { Refused } from '../core/refusal.js';
import type { LiftedHalt } from '../plane/lifted-halts.js';
import type { AlertsStatus, EventsPage } from '../plane/event-types.js';
import type { AuditLogPage, AuditVerification, DeleteTenantAnswer, DeleteTenantInput, RunsPage, SlotHoldersPage, TenantAuditVerification } from '../plane/operator-types.js';
import type {
  AdmitResult,
  DispatchResult,
  HaltInput,
  HaltResult,
  HeartbeatResult,
  LiftInput,
  LiftResult,
  Plane,
  PlaneHaltInput,
  PlaneHaltResult,
  PlaneLiftInput,
  PlaneStatus,
  ResumeResult,
} from '../plane/plane.js';
import type { ApiKeyAdmin, CreatedApiKey, RevokedApiKey, RotatedApiKey } from '../plane/api-key-admin.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { WebhookAdmin, WebhookEndpointView, WebhookSecretIssued } from '../plane/webhooks.js';
import type { WebhookDelivery } from '../store/port/webhooks.js';
import type { Held } from '../store/types.js';
import { fetchTransport, type TransportAnswer, undiciTransport } from './http-transport.js';
import { decodeProblem } from './problem-decoding.js';

/**
 * The longest `waitMs` the client sends, ms: the server's bound on the `wait` of `POST /v1/runs`
 * (`MAX_HTTP_WAIT_MS` of the route, 60 000; the library plane takes up to 900 000). A larger value
 * is refused here, `INVALID_ARGUMENT` naming `waitMs`, before any request is sent.
 */
export const CLIENT_MAX_WAIT_MS = 60_000;

/** The run lifecycle and quota verbs of the plane: what a runner's code calls. */
export type PlaneVerbs = Pick<Plane, 'admit' | 'settle' | 'resume' | 'dispatch' | 'usage' | 'setQuota' | 'getQuota' | 'updateQuota' | 'halt' | 'lift' | 'halts'>;

/**
 * A typed client of `quotaplane serve`: every verb of the {@link Plane} over HTTP, so code written
 * against `createPlane` (a runner's lifecycle, or the operator CLI's acts and listings) runs
 * against a server by swapping the object. Refusals come back as the same values
 * (`{ ok: false, refusal, message }`) and faults as the same `QuotaError` codes.
 *
 * Differences from a local plane, by design:
 * - the operator recorded for `halt`, `lift`, `setQuota`, `release` and an operator's `settle` is
 *   the key's name with basis `authenticated`; a `by` argument is not sent. For `settle`, giving
 *   `by` (any value) chooses the operator's audited settle over the runner's;
 * - `verifyAudit` and `sweep` without a tenant cover the tenants the key covers (`verifyAudit` also
 *   quotaplane's own chains, `quotaplane:plane` and `quotaplane:keys`, when the key covers them);
 * - `atMs` is accepted only from an operator key (the server refuses it from a runner key);
 * - `dispatch`'s `exempt` (a compensating dispatch that checks no ceiling) likewise: a runner key
 *   sending it gets `INVALID_ARGUMENT` naming `exempt`; compensate with an operator key or the library;
 * - `newTenant` (of `halt`, `setQuota`, `updateQuota` and `keys.create`, rules.md#l95) travels as
 *   the query `?newTenant=true`;
 * - every `leaseMs` is at most `MAX_LEASE_MS` (24 hours), as in the library;
 * - a server that cannot be reached throws `STORE_UNAVAILABLE` (fail closed): nothing is known to
 *   have been decided, so retry; pass your own `run` id to `admit` to make a retry idempotent.
 */
export interface QuotaplaneClient extends Plane {
  /** The server's base URL, as given. */
  readonly url: string;
  /**
   * `Plane.halt` over HTTP. `by` may be left out, and is not sent when given: the server records
   * the operator key's name (an operator says who it is with its key, not in the body).
   */
  halt(input: ClientHaltInput): Promise<HaltResult>;
  /** `Plane.lift` over HTTP; `by` as in {@link QuotaplaneClient.halt}. */
  lift(input: ClientLiftInput): Promise<LiftResult>;
  /** `Plane.haltPlane` over HTTP (an operator key of every tenant); `by` as in {@link QuotaplaneClient.halt}. */
  haltPlane(input: ClientPlaneHaltInput): Promise<PlaneHaltResult>;
  /** `Plane.liftPlaneHalt` over HTTP; `by` as in {@link QuotaplaneClient.halt}. */
  liftPlaneHalt(input?: ClientPlaneLiftInput): Promise<LiftResult>;
  /** `Plane.deleteTenant` over HTTP (an operator key of every tenant); `by` as in {@link QuotaplaneClient.halt}. */
  deleteTenant(input: ClientDeleteTenantInput): Promise<DeleteTenantAnswer>;
  /**
   * The server's API keys (`/v1/keys`, operator keys only; docs/guides/operating.md#api-keys),
   * audited under the key's name.
   */
  readonly keys: ApiKeyAdmin;
  /**
   * The server's webhook endpoints and deliveries (`/v1/webhooks`, operator keys only;
   * docs/guides/webhooks.md), the same acts as `createWebhooks` on a store.
   */
  readonly webhooks: WebhookAdmin;
}

/**
 * Options of {@link createClient}: `url` the server's base URL (`http://127.0.0.1:7070`), `key` an
 * API key (`qp_…`) sent as `Authorization: Bearer`, `fetch` a fetch to send requests through
 * instead of the default (undici's `request` on a keep-alive pool, see `http-transport.ts`; tests
 * pass one that calls `app.inject`).
 */
export interface ClientOptions {
  readonly url: string;
  readonly key: string;
  readonly fetch?: typeof globalThis.fetch | undefined;
}

/** {@link PlaneHaltInput} without the operator: the server records the key's name. */
export type ClientPlaneHaltInput = Omit<PlaneHaltInput, 'by'> & { readonly by?: PlaneHaltInput['by'] };

/** {@link PlaneLiftInput} without the operator: the server records the key's name. */
export type ClientPlaneLiftInput = Omit<PlaneLiftInput, 'by'> & { readonly by?: PlaneLiftInput['by'] };

/** {@link HaltInput} without the operator: the server records the key's name. */
export type ClientHaltInput = Omit<HaltInput, 'by'> & { readonly by?: HaltInput['by'] };

/** {@link LiftInput} without the operator: the server records the key's name. */
export type ClientLiftInput = Omit<LiftInput, 'by'> & { readonly by?: LiftInput['by'] };

/** {@link DeleteTenantInput} without the operator: the server records the key's name. */
export type ClientDeleteTenantInput = Omit<DeleteTenantInput, 'by'> & { readonly by?: DeleteTenantInput['by'] };

interface HaltView {
  readonly scope: string;
  readonly reason: string;
  readonly by: Operator;
  readonly atMs: number;
  readonly reachesRunning?: boolean;
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
  const send = options.fetch === undefined ? undiciTransport : fetchTransport(options.fetch);
  const authorization = `Bearer ${options.key}`;

  async function call<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T | Refused> {
    const headers: Record<string, string> = { authorization, accept: 'application/json, application/problem+json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let answer: TransportAnswer;
    try {
      answer = await send(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        ...(signal === undefined ? {} : { signal }),
      });
    } catch (error) {
      if (signal?.aborted === true) throw signal.reason;
      throw unreachable(base, error);
    }
    const parsed = parseJson(answer.body);
    if (answer.status >= 200 && answer.status < 300) {
      if (parsed === undefined) {
        throw new QuotaError('INTERNAL', `the quotaplane server at ${base} answered ${method} ${path} with a body that is not JSON`);
      }
      return parsed as T;
    }
    const decoded = decodeProblem(answer.status, parsed);
    if (decoded.kind === 'fault') throw decoded.error;
    return decoded.refused;
  }
  // Verbs that never refuse still pass a refusal through untouched, should a newer server answer one.
  const value = <T>(method: string, path: string, body?: unknown) => call<T>(method, path, body) as Promise<T>;

  const tenantPath = (tenant: unknown, rest: string) => `/v1/tenants/${encodeURIComponent(requireIdentifier('tenant', tenant))}${rest}`;
  const runPath = (run: unknown, rest: string) => `/v1/runs/${encodeURIComponent(requireIdentifier('run', run))}${rest}`;
  const tenantRunPath = (tenant: unknown, run: unknown, rest: string) =>
    tenantPath(tenant, `/runs/${encodeURIComponent(requireIdentifier('run', run))}${rest}`);
  // A tenant listing: `GET /v1/tenants/{tenant}<rest>?<query>`, members left out when undefined.
  const listing = <T>(input: unknown, rest: string, query: (request: Record<string, unknown>) => Record<string, unknown> = () => ({})) => {
    const request = requestBody(input);
    return value<T>('GET', `${tenantPath(request.tenant, rest)}${queryString({ limit: request.limit, ...query(request) })}`);
  };

  const client: QuotaplaneClient = {
    url: base,
    admit: (input) => {
      // `waitMs` travels as the route's `wait` field (a long poll); `signal` ends the request, and
      // the server gives the place in the queue back when the connection closes
      // (docs/design/rules.md#w31).
      const { waitMs, signal, ...body } = requestBody(input);
      if (signal !== undefined && !(signal instanceof AbortSignal)) throw invalidArgument('signal', `must be an AbortSignal, got ${describe(signal)}`);
      if (waitMs !== undefined && (typeof waitMs !== 'number' || !Number.isSafeInteger(waitMs) || waitMs < 0 || waitMs > CLIENT_MAX_WAIT_MS)) {
        return Promise.reject(
          invalidArgument(
            'waitMs',
            `must be an integer number of milliseconds from 0 to ${CLIENT_MAX_WAIT_MS} over HTTP (a long poll stays within common proxy timeouts; ` +
              `the library plane accepts up to 900000), got ${describe(waitMs)}; wait again after a TooManyRuns answer to wait longer`,
          ),
        );
      }
      return call('POST', '/v1/runs', waitMs === undefined ? body : { ...body, wait: waitMs }, signal) as Promise<AdmitResult>;
    },
    settle: (input) => {
      const { tenant, run, by, ...body } = requestBody(input);
      // With `by` it is an operator's settle: the operator route audits it under the key's name.
      return by === undefined
        ? value('POST', runPath(run, '/settle'), { tenant, ...body })
        : value('POST', tenantRunPath(tenant, run, '/settle'), body);
    },
    resume: (input) => {
      const { run, ...body } = requestBody(input);
      return call('POST', runPath(run, '/resume'), body) as Promise<ResumeResult>;
    },
    heartbeat: (input) => {
      const { run, ...body } = requestBody(input);
      return call('POST', runPath(run, '/heartbeat'), body) as Promise<HeartbeatResult>;
    },
    dispatch: (input) => {
      const { run, ...body } = requestBody(input);
      return call('POST', runPath(run, '/dispatches'), body) as Promise<DispatchResult>;
    },
    usage: (input) => {
      const { tenant, period } = requestBody(input);
      return value('GET', `/v1/usage${queryString({ tenant: tenant === undefined ? undefined : requireIdentifier('tenant', tenant), period })}`);
    },
    // The operator is the key's name, recorded by the server; `newTenant` travels as the query ?newTenant=true.
    setQuota: async (tenant, quota: TenantQuotaInput, by) =>
      (await value<{ quota: TenantQuota }>('PUT', `${tenantPath(tenant, '/quota')}${newTenantQuery(newTenantOf(by))}`, quota)).quota,
    getQuota: async (tenant) => (await value<{ quota: TenantQuota | null }>('GET', tenantPath(tenant, '/quota'))).quota,
    updateQuota: async (tenant, patch, by) =>
      (await value<{ quota: TenantQuota }>('PATCH', `${tenantPath(tenant, '/quota')}${newTenantQuery(newTenantOf(by))}`, patch)).quota,
    getPlaneCeiling: async () => (await value<PlaneStatus>('GET', '/v1/plane')).ceiling,
    setPlaneCeiling: async (ceiling) => (await value<{ ceiling: PlaneCeiling }>('PUT', '/v1/plane/ceiling', ceiling)).ceiling,
    updatePlaneCeiling: async (patch) => (await value<{ ceiling: PlaneCeiling }>('PATCH', '/v1/plane/ceiling', patch)).ceiling,
    planeStatus: () => value<PlaneStatus>('GET', '/v1/plane'),
    halt: (input) => {
      const { tenant, scope, reason, atMs, newTenant, reachesRunning } = requestBody(input);
      return value('POST', `${tenantPath(tenant, '/halts')}${newTenantQuery(newTenant)}`, { scope: scopeKey(scope), reason, atMs, reachesRunning });
    },
    lift: (input) => {
      const { tenant, scope, atMs } = requestBody(input);
      return value('POST', tenantPath(tenant, '/halts/lift'), { scope: scopeKey(scope), atMs });
    },
    haltPlane: (input) => {
      const { reason, atMs, reachesRunning } = requestBody(input);
      return value('POST', '/v1/plane/halt', { reason, atMs, reachesRunning });
    },
    liftPlaneHalt: (input = {}) => {
      const { atMs } = requestBody(input);
      return value('POST', '/v1/plane/halt/lift', { atMs });
    },
    planeHalt: async (): Promise<Halt | null> => {
      const { halt } = await value<PlaneStatus>('GET', '/v1/plane');
      if (halt === null) return null;
      const standing: Halt = { scope: { kind: 'plane' }, reason: halt.reason, by: halt.by, atMs: halt.atMs };
      return halt.reachesRunning ? { ...standing, reachesRunning: true } : standing;
    },
    halts: async (tenant): Promise<Halt[]> => {
      const reply = await value<{ halts: HaltView[] }>('GET', tenantPath(tenant, '/halts'));
      return reply.halts.map((view) => {
        const scope = parseHaltScope(view.scope);
        if (scope === null) throw new QuotaError('INTERNAL', `the quotaplane server listed a halt with an unreadable scope ${JSON.stringify(view.scope)}`);
        const halt: Halt = { scope, reason: view.reason, by: view.by, atMs: view.atMs };
        return view.reachesRunning === true && scope.kind !== 'subject' ? { ...halt, reachesRunning: true } : halt;
      });
    },
    sweep: (input = {}) => {
      const { tenant, atMs } = requestBody(input);
      return value('POST', '/v1/sweep', { tenant, atMs });
    },
    // One request: the server prunes in batches and answers when done (no progress crosses HTTP,
    // so onProgress is not sent); `by` is the key's name, recorded by the server.
    prune: (input) => {
      const { tenant, olderThanMs, dryRun, atMs, batchSize } = requestBody(input);
      return value('POST', '/v1/prune', { tenant, olderThanMs, dryRun, atMs, batchSize });
    },
    attention: (input = {}) => {
      const { tenant, ...query } = requestBody(input);
      return value('GET', `${tenant === undefined ? '/v1/attention' : tenantPath(tenant, '/attention')}${queryString(query)}`);
    },
    release: (input) => {
      const { tenant, run, atMs, ifStatus } = requestBody(input);
      return value('POST', tenantRunPath(tenant, run, '/release'), { atMs, ifStatus });
    },
    deleteTenant: (input) => {
      const { tenant, reason, atMs } = requestBody(input);
      return value('POST', tenantPath(tenant, '/delete'), { reason, atMs });
    },
    verifyAudit: async (input = {}) => {
      const { tenant } = requestBody(input);
      // Every tenant the key covers, one chain at a time, as the plane walks every tenant of its
      // store; then quotaplane's own chains, which /v1/tenants does not list: those the key covers
      // (a key of one tenant gets 404 for them) and that hold rows, as the plane lists them.
      const tenants = tenant === undefined ? await client.tenants() : [tenant];
      const verified: TenantAuditVerification[] = [];
      for (const name of tenants) {
        verified.push(...(await value<AuditVerification>('GET', tenantPath(name, '/audit/verify'))).tenants);
      }
      if (tenant === undefined) {
        for (const chain of RESERVED_AUDIT_CHAINS) {
          try {
            verified.push(...(await value<AuditVerification>('GET', tenantPath(chain, '/audit/verify'))).tenants.filter((result) => result.rows > 0 || !result.ok));
          } catch (error) {
            if (!(isQuotaError(error) && error.code === 'NOT_FOUND')) throw error;
          }
        }
      }
      return { ok: verified.every((result) => result.ok), tenants: verified };
    },
    runs: (input) =>
      listing<RunsPage>(input, '/runs', ({ statuses, after }) => ({ status: Array.isArray(statuses) ? statuses.join(',') : statuses, after })),
    slotHolders: (input) => listing<SlotHoldersPage>(input, '/slots'),
    reservations: async (input) => {
      const reply = await listing<{ reservations: Held[]; truncated: boolean }>(input, '/reservations');
      return { holds: reply.reservations, truncated: reply.truncated };
    },
    liftedHalts: async (input) => {
      const reply = await listing<{ lifted: LiftedHalt[]; truncated: boolean }>(input, '/halts', () => ({ state: 'lifted' }));
      return { lifted: reply.lifted, truncated: reply.truncated };
    },
    auditLog: (input) => listing<AuditLogPage>(input, '/audit', ({ action }) => ({ action })),
    events: (input = {}) => {
      const { tenant, after, limit, last } = requestBody(input);
      const query = queryString({ after, limit, last });
      return value<EventsPage>('GET', tenant === undefined ? `/v1/events${query}` : `${tenantPath(tenant as string, '/events')}${query}`);
    },
    alerts: (input) => value<AlertsStatus>('GET', tenantPath(requestBody(input).tenant as string, '/alerts')),
    tenants: async () => (await value<{ tenants: string[] }>('GET', '/v1/tenants')).tenants,
    spendHistory: (input) => {
      const { tenant, periods, atMs } = requestBody(input);
      return value('GET', `${tenantPath(tenant, '/spend')}${queryString({ periods, atMs })}`);
    },
    rateWindows: (input) => {
      const { tenant, atMs } = requestBody(input);
      return value('GET', `${tenantPath(tenant, '/rates')}${queryString({ atMs })}`);
    },
    reserveCall: async (input) => {
      const { tenant, ...body } = requestBody(input);
      const answer = await call<{ call: CallReservation; retried: boolean }>('POST', tenantPath(tenant, '/calls'), body);
      // The plane's refusal carries no message (callRefusalMessage words it): answer exactly its value.
      if ('refusal' in answer) return { ok: false, refusal: answer.refusal as unknown as CallRefusal } satisfies ReserveCallOutcome;
      return { ok: true, call: answer.call, retried: answer.retried };
    },
    adjustCall: (input) => {
      const { tenant, callId, ...body } = requestBody(input);
      return value<CallEnded>('POST', tenantPath(tenant, `/calls/${encodeURIComponent(requireIdentifier('callId', callId))}/adjust`), body);
    },
    releaseCall: (input) => {
      // `by` is not sent: an operator key's release is recorded under the key's name by the server.
      const { tenant, callId, by: _by, ...body } = requestBody(input);
      return value<CallEnded>('POST', tenantPath(tenant, `/calls/${encodeURIComponent(requireIdentifier('callId', callId))}/release`), body);
    },
    modelCall: async (input) => {
      const { tenant, callId } = requestBody(input);
      try {
        return await value<CallReservation>('GET', tenantPath(tenant, `/calls/${encodeURIComponent(requireIdentifier('callId', callId))}`));
      } catch (error) {
        if (isQuotaError(error, 'NOT_FOUND')) return null;
        throw error;
      }
    },
    openCalls: async (input) => (await listing<{ calls: CallReservation[] }>(input, '/calls')).calls,
    getCallCeilings: async (tenant) => (await value<{ ceilings: CallCeilings | null }>('GET', tenantPath(tenant, '/call-ceilings'))).ceilings,
    setCallCeilings: async (tenant, ceilings, options = {}) =>
      (await value<{ ceilings: CallCeilings | null }>('PUT', `${tenantPath(tenant, '/call-ceilings')}${newTenantQuery(options.newTenant)}`, { ceilings })).ceilings,
    callStandings: async (input) => {
      const { tenant, atMs, limit } = requestBody(input);
      return (await value<{ standings: SubjectStanding[] }>('GET', `${tenantPath(tenant, '/call-standings')}${queryString({ atMs, limit })}`)).standings;
    },
    webhooks: {
      add: (input) => value<WebhookSecretIssued>('POST', '/v1/webhooks', requestBody(input)),
      list: async (tenant) =>
        (await value<{ webhooks: WebhookEndpointView[] }>('GET', `/v1/webhooks${queryString({ tenant: tenant ?? undefined })}`)).webhooks.filter(
          (endpoint) => tenant === undefined || endpoint.tenant === tenant,
        ),
      get: async (id) => {
        const found = (await value<{ webhooks: WebhookEndpointView[] }>('GET', '/v1/webhooks')).webhooks.find((endpoint) => endpoint.id === id);
        if (found === undefined) throw new QuotaError('NOT_FOUND', `no webhook endpoint '${String(id)}' that this key may manage`, { details: { id } });
        return found;
      },
      remove: async (id) => {
        await value('DELETE', `/v1/webhooks/${encodeURIComponent(String(id))}`);
      },
      rotate: (id, overlapMs) => value<WebhookSecretIssued>('POST', `/v1/webhooks/${encodeURIComponent(String(id))}/rotate`, overlapMs === undefined ? {} : { overlapMs }),
      deliveries: async (id, { status, limit } = {}) =>
        (await value<{ deliveries: WebhookDelivery[] }>('GET', `/v1/webhooks/${encodeURIComponent(String(id))}/deliveries${queryString({ status, limit })}`)).deliveries,
      resend: (deliveryId) => value<WebhookDelivery>('POST', `/v1/webhooks/deliveries/${encodeURIComponent(String(deliveryId))}/resend`),
    },
    keys: {
      create: (input) => {
        const { newTenant, ...body } = requestBody(input);
        return value<CreatedApiKey>('POST', `/v1/keys${newTenantQuery(newTenant)}`, body);
      },
      list: async () => (await value<{ keys: ApiKeyRecord[] }>('GET', '/v1/keys')).keys,
      rotate: (id, input) => value<RotatedApiKey>('POST', `/v1/keys/${encodeURIComponent(String(id))}/rotate`, requestBody(input)),
      revoke: async (id) => {
        try {
          return await value<RevokedApiKey>('POST', `/v1/keys/${encodeURIComponent(String(id))}/revoke`, {});
        } catch (error) {
          if (isQuotaError(error, 'NOT_FOUND')) return { id, outcome: 'not-found' as const };
          throw error;
        }
      },
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

// The `newTenant` of a quota change's third argument: an operator (not sent) or `{ by, newTenant }`.
function newTenantOf(by: unknown): unknown {
  if (typeof by !== 'object' || by === null || 'actor' in by || 'basis' in by) return undefined;
  return (by as { newTenant?: unknown }).newTenant;
}

// The query saying a tenant is new (rules.md#l95): `?newTenant=true` when `newTenant` is true,
// nothing when it is false or absent; anything else is refused as the plane refuses it.
function newTenantQuery(newTenant: unknown): string {
  if (newTenant !== undefined && typeof newTenant !== 'boolean') throw invalidArgument('newTenant', `must be true or false, got ${describe(newTenant)}`);
  return newTenant === true ? queryString({ newTenant: true }) : '';
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

// `?a=1&b=2` of the members that are not undefined; '' when none is.
function queryString(members: Record<string, unknown>): string {
  const query = new URLSearchParams();
  for (const [name, member] of Object.entries(members)) if (member !== undefined) query.set(name, String(member));
  return query.size === 0 ? '' : `?${query.toString()}`;
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
