import type { QuotaEvent } from '../../core/events.js';
import { QuotaError } from '../../core/errors.js';
import type { ApiKeyRecord, ApiKeyStore, ExpireOutcome, KeyUse, NewApiKey, NewKeySession, RevokeOutcome } from '../../store/api-keys.js';
import { storeHasTenant } from '../../store/known-tenants.js';
import type { QuotaStore, TenantStore } from '../../store/store.js';
import type { WaiterWakes } from '../../store/waiter-wakes.js';
import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import type { Halt } from '../../core/halt-scope.js';
import type { AuditEntry, PlaneUsage } from '../../store/types.js';
import type { WebhookStore } from '../../store/port/webhooks.js';
import type { CallMeterStore } from '../../store/port/model-calls.js';

/**
 * A store `serve` listens in front of before the real one is open: every call
 * fails closed with `STORE_UNAVAILABLE` ("not open yet") until {@link PendingStore.open} hands it
 * the store, and then passes straight through. So the port answers `/healthz` at once and every
 * other request a 503, while the start waits for a store that is not reachable yet.
 */
export class PendingStore implements QuotaStore {
  readonly backend: string;
  #store: QuotaStore | null = null;
  readonly #keys: ApiKeyStore;
  readonly #webhooks: WebhookStore;
  readonly #callMeters: CallMeterStore;

  /** `backend` is what the URL names (`sqlite`, `postgres`), reported until the store is open. */
  constructor(backend: string) {
    this.backend = backend;
    const keys = (): ApiKeyStore => {
      const store = this.#ready();
      const apiKeys = store.apiKeys?.();
      if (apiKeys === undefined) throw new QuotaError('INTERNAL', `the ${store.backend} store keeps no API keys`);
      return apiKeys;
    };
    this.#keys = {
      create: async (key: NewApiKey) => keys().create(key),
      createFirst: async (key: NewApiKey) => keys().createFirst(key),
      findByHash: async (hash: string): Promise<ApiKeyRecord | null> => keys().findByHash(hash),
      list: async () => keys().list(),
      revoke: async (id: string, atMs: number): Promise<RevokeOutcome> => keys().revoke(id, atMs),
      expire: async (id: string, atMs: number): Promise<ExpireOutcome> => keys().expire(id, atMs),
      recordUse: async (uses: readonly KeyUse[]) => keys().recordUse(uses),
      createSession: async (session: NewKeySession) => keys().createSession(session),
      findSession: async (hash: string, nowMs: number) => keys().findSession(hash, nowMs),
      endSession: async (hash: string) => keys().endSession(hash),
    };
    const hooks = (): WebhookStore => {
      const store = this.#ready();
      const webhooks = store.webhooks?.();
      if (webhooks === undefined) throw new QuotaError('INTERNAL', `the ${store.backend} store keeps no webhooks`);
      return webhooks;
    };
    // Every method, forwarded to the real store's webhooks once it is open.
    this.#webhooks = {
      createEndpoint: async (...args) => hooks().createEndpoint(...args),
      endpoint: async (...args) => hooks().endpoint(...args),
      endpoints: async (...args) => hooks().endpoints(...args),
      removeEndpoint: async (...args) => hooks().removeEndpoint(...args),
      rotateSecrets: async (...args) => hooks().rotateSecrets(...args),
      lowestCursor: async () => hooks().lowestCursor(),
      fanOut: async (...args) => hooks().fanOut(...args),
      claimDue: async (...args) => hooks().claimDue(...args),
      recordAttempt: async (...args) => hooks().recordAttempt(...args),
      deliveries: async (...args) => hooks().deliveries(...args),
      delivery: async (...args) => hooks().delivery(...args),
      resend: async (...args) => hooks().resend(...args),
      oldestPendingAtMs: async () => hooks().oldestPendingAtMs(),
    };
    const calls = (): CallMeterStore => {
      const store = this.#ready();
      const meters = store.callMeters?.();
      if (meters === undefined) throw new QuotaError('INTERNAL', `the ${store.backend} store keeps no model-call books`);
      return meters;
    };
    // Every method, forwarded to the real store's model-call books once it is open.
    this.#callMeters = {
      callCeilings: async (...args) => calls().callCeilings(...args),
      setCallCeilings: async (...args) => calls().setCallCeilings(...args),
      reserveCall: async (...args) => calls().reserveCall(...args),
      adjustCall: async (...args) => calls().adjustCall(...args),
      releaseCall: async (...args) => calls().releaseCall(...args),
      call: async (...args) => calls().call(...args),
      openCalls: async (...args) => calls().openCalls(...args),
      callStandings: async (...args) => calls().callStandings(...args),
      expireCalls: async (...args) => calls().expireCalls(...args),
    };
  }

  /** The store, once open; from then on every call goes to it. */
  open(store: QuotaStore): void {
    this.#store = store;
  }

  /** True once {@link open} ran. */
  get isOpen(): boolean {
    return this.#store !== null;
  }

  tenant(tenant: string): TenantStore {
    return this.#ready().tenant(tenant);
  }

  async tenants(): Promise<string[]> {
    return this.#ready().tenants();
  }

  /** The real store's chains, or, for a store without the capability, its tenants (store.ts `auditChains`). */
  async auditChains(): Promise<string[]> {
    const store = this.#ready();
    return store.auditChains === undefined ? store.tenants() : store.auditChains();
  }

  /** The real store's answer (docs/design/rules.md#l95). */
  async hasTenant(tenant: string): Promise<boolean> {
    return storeHasTenant(this.#ready(), tenant);
  }

  apiKeys(): ApiKeyStore {
    return this.#keys;
  }

  /** The real store's webhooks (docs/design/rules.md#h1); before it opens, each call fails closed. */
  webhooks(): WebhookStore {
    return this.#webhooks;
  }

  /** The real store's model-call books (docs/design/rules.md#m1); before it opens, each call fails closed. */
  callMeters(): CallMeterStore {
    return this.#callMeters;
  }

  /** The real store's wakes of waiting admissions; before it opens, none (callers poll). */
  waiterWakes(): WaiterWakes {
    return this.#store?.waiterWakes?.() ?? { subscribe: () => () => undefined, pollMs: () => 100 };
  }

  async getPlaneCeiling(): Promise<PlaneCeiling | null> {
    return this.#present('getPlaneCeiling').getPlaneCeiling();
  }

  async setPlaneCeiling(plane: PlaneCeiling, audit: AuditEntry, auditTenant: string): Promise<void> {
    return this.#present('setPlaneCeiling').setPlaneCeiling(plane, audit, auditTenant);
  }

  async getPlaneHalt(): Promise<Halt | null> {
    return this.#present('getPlaneHalt').getPlaneHalt();
  }

  async setPlaneHalt(halt: Halt, audit: AuditEntry, auditTenant: string): Promise<void> {
    return this.#present('setPlaneHalt').setPlaneHalt(halt, audit, auditTenant);
  }

  async liftPlaneHaltIf(standing: Halt, audit: AuditEntry, auditTenant: string): Promise<boolean> {
    return this.#present('liftPlaneHaltIf').liftPlaneHaltIf(standing, audit, auditTenant);
  }

  async eventsAfter(afterSeq: number, limit: number, tenant?: string): Promise<readonly QuotaEvent[]> {
    return this.#present('eventsAfter').eventsAfter(afterSeq, limit, tenant);
  }

  async newestEvents(limit: number, tenant?: string): Promise<readonly QuotaEvent[]> {
    return this.#present('newestEvents').newestEvents(limit, tenant);
  }

  #present<K extends 'getPlaneCeiling' | 'setPlaneCeiling' | 'planeUsage' | 'getPlaneHalt' | 'setPlaneHalt' | 'liftPlaneHaltIf' | 'eventsAfter' | 'newestEvents'>(
    method: K,
  ): Required<Pick<QuotaStore, K>> {
    const store = this.#ready();
    if (store[method] === undefined) throw new QuotaError('INTERNAL', `the ${store.backend} store has no plane-wide capability ${method}`);
    return store as unknown as Required<Pick<QuotaStore, K>>;
  }

  async planeUsage(agents: readonly string[]): Promise<PlaneUsage> {
    return this.#present('planeUsage').planeUsage(agents);
  }

  /** Closes the real store when it was opened; nothing otherwise. */
  async close(): Promise<void> {
    await this.#store?.close();
  }

  #ready(): QuotaStore {
    if (this.#store === null) {
      throw new QuotaError('STORE_UNAVAILABLE', 'the store is not open yet: the server is starting and waits for it; retry shortly', {
        details: { backend: this.backend, starting: true },
      });
    }
    return this.#store;
  }
}
