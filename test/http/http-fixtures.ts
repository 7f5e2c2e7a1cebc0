import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

import { buildApp, type BuildAppOptions } from '../../src/http/build-app.js';
import { hashApiKey, mintApiKey } from '../../src/http/api-key-secret.js';
import { SESSION_COOKIE } from '../../src/http/key-session.js';
import { createPlane } from '../../src/plane/create-plane.js';
import type { Plane } from '../../src/plane/plane.js';
import type { ApiKeyRecord, ApiKeyRole, ApiKeyStore } from '../../src/store/api-keys.js';
import { openStore } from '../../src/store/open-store.js';
import type { QuotaStore } from '../../src/store/store.js';
import { ManualClock } from '../../src/testing/manual-clock.js';

/** 2026-01-05T08:00:00Z in ms: every service fixture starts its clock here. */
export const T0 = 1_767_600_000_000;

/** The grant the fixtures dispatch, so a snapshot can count its rate rows. */
export const GRANT = 'tool://payments/refund';

/** One key the fixture made: its secret (for the header) and its record. */
export interface FixtureKey {
  readonly secret: string;
  readonly record: ApiKeyRecord;
}

/** The keys every service fixture holds. */
export interface FixtureKeys {
  /** Operator of every tenant, named `ops-all`. */
  readonly opAll: FixtureKey;
  /** Operator of acme only, named `ops-acme`. */
  readonly opAcme: FixtureKey;
  /** Operator of globex only. */
  readonly opGlobex: FixtureKey;
  /** Runner of acme. */
  readonly runAcme: FixtureKey;
  /** Runner of globex. */
  readonly runGlobex: FixtureKey;
  /** A runner key of acme that was revoked. */
  readonly revoked: FixtureKey;
  /** An operator key of every tenant that expired at T0. */
  readonly expired: FixtureKey;
  /** The `Cookie` header of a dashboard session of {@link opAll}, lasting past every test. */
  readonly opAllSession: string;
}

/** A service on a private in-memory SQLite store with a manual clock, and its keys. */
export interface ServiceFixture {
  readonly app: FastifyInstance;
  readonly store: QuotaStore;
  readonly keys: ApiKeyStore;
  readonly plane: Plane;
  readonly clock: ManualClock;
  readonly key: FixtureKeys;
  close(): Promise<void>;
}

// A fixed session token of the fixture's operator of every tenant (key-session.ts shape).
const SESSION_TOKEN = `qps_${'s'.repeat(43)}`;

/** Makes a key of `role` for `tenant` named `name` in `keys`. */
export async function makeKey(keys: ApiKeyStore, role: ApiKeyRole, tenant: string, name: string, atMs = T0): Promise<FixtureKey> {
  const minted = mintApiKey({ role, tenant, name, atMs });
  await keys.create(minted.key);
  const record = await keys.findByHash(minted.key.hash);
  if (record === null) throw new Error('a key just created was not found');
  return { secret: minted.secret, record };
}

/** Opens a service fixture; `options` override what `buildApp` gets. */
export async function serviceFixture(options: Partial<BuildAppOptions> = {}): Promise<ServiceFixture> {
  const store = await openStore('sqlite::memory:');
  const keys = store.apiKeys?.();
  if (keys === undefined) throw new Error('the SQLite store has no apiKeys()');
  const clock = new ManualClock(T0);
  const plane = createPlane({ store, clock });
  const key: FixtureKeys = {
    opAll: await makeKey(keys, 'operator', '*', 'ops-all'),
    opAcme: await makeKey(keys, 'operator', 'acme', 'ops-acme'),
    opGlobex: await makeKey(keys, 'operator', 'globex', 'ops-globex'),
    runAcme: await makeKey(keys, 'runner', 'acme', 'acme-runner'),
    runGlobex: await makeKey(keys, 'runner', 'globex', 'globex-runner'),
    revoked: await makeKey(keys, 'runner', 'acme', 'acme-old-runner'),
    expired: await makeKey(keys, 'operator', '*', 'ops-expired'),
    opAllSession: `${SESSION_COOKIE}=${SESSION_TOKEN}`,
  };
  await keys.revoke(key.revoked.record.id, T0);
  await keys.expire(key.expired.record.id, T0);
  await keys.createSession({ hash: hashApiKey(SESSION_TOKEN), keyId: key.opAll.record.id, createdAtMs: T0, expiresAtMs: T0 + 365 * 86_400_000 });
  const app = await buildApp({ plane, store, keys, clock, ...options });
  return {
    app,
    store,
    keys,
    plane,
    clock,
    key,
    async close() {
      await app.close();
      await store.close();
    },
  };
}

/** `Authorization` header of a key. */
export function bearer(key: FixtureKey | string): Record<string, string> {
  return { authorization: `Bearer ${typeof key === 'string' ? key : key.secret}` };
}

/**
 * A `fetch` that calls `app.inject` instead of the network, so the client runs against the app
 * exactly as it would against a listening server, without binding a port.
 */
export function injectFetch(app: FastifyInstance): typeof globalThis.fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const headers = Object.fromEntries(new Headers(init?.headers ?? {}).entries());
    const response = await app.inject({
      method: (init?.method ?? 'GET') as 'GET',
      url: `${url.pathname}${url.search}`,
      headers,
      ...(init?.body === undefined || init.body === null ? {} : { payload: init.body as string }),
    });
    return new Response(response.statusCode === 204 ? null : response.body, {
      status: response.statusCode,
      headers: response.headers as Record<string, string>,
    });
  }) as typeof globalThis.fetch;
}

/** Asserts a reply is the problem envelope with `status` and `code`, and answers its body. */
export function expectProblem(response: LightMyRequestResponse, status: number, code: string): Record<string, unknown> {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json<Record<string, unknown>>();
  expect(problem).toMatchObject({ status, code, type: `urn:quotaplane:problem:${code}` });
  expect(typeof problem.title).toBe('string');
  expect(typeof problem.detail).toBe('string');
  expect(problem.requestId).toBe(response.headers['x-request-id']);
  return problem;
}

/**
 * Everything a request could change, read behind the service: tenants, and per tenant its quota,
 * halts, slots, holds, audit log, settled spend of the fixture's periods, runs the fixture
 * admitted, the run registry with its leases, and the dispatches counted for {@link GRANT}; plus
 * the API keys.
 */
export async function stateSnapshot(fixture: Pick<ServiceFixture, 'store' | 'keys'>, runs: readonly string[] = []): Promise<unknown> {
  const { store } = fixture;
  const tenants = ['acme', 'globex', ...(await store.tenants())];
  const perTenant: Record<string, unknown> = {};
  for (const tenant of [...new Set(tenants)].sort()) {
    const handle = store.tenant(tenant);
    const room = await handle.rateRoom(GRANT, [{ count: 1, windowSeconds: 2_678_400 }], T0 + 86_400_000);
    perTenant[tenant] = {
      quota: await handle.getQuota(),
      halts: await handle.halts(),
      running: await handle.runningRuns(1000),
      holds: await handle.reservations(1000),
      audit: await handle.auditLog({ limit: 1000 }),
      spentMonth: await handle.spent('2026-01'),
      spentDay: await handle.spent('2026-01-05'),
      runs: await Promise.all(runs.map((run) => handle.getRun(run))),
      // The registry with each run's status and latest lease: what a heartbeat or a sweep changes.
      registry: await handle.runs({ limit: 1000 }),
      dispatches: room.ok ? 0 : room.refusal.code === 'RateLimited' ? room.refusal.reached : -1,
    };
  }
  // lastUsedAtMs is advisory bookkeeping any authenticated request may move (docs/guides/operating.md#api-keys).
  const keys = (await fixture.keys.list()).map(({ lastUsedAtMs: _lastUsed, ...key }) => key);
  return { tenants: await store.tenants(), perTenant, keys };
}
