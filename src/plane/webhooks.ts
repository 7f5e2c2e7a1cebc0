import { requireExistingTenant } from './known-tenant.js';
import { randomBytes as cryptoRandomBytes } from 'node:crypto';

import { ulid } from 'ulid';

import { describe } from '../core/amounts.js';
import type { Clock } from '../core/clock.js';
import { invalidArgument, QuotaError } from '../core/errors.js';
import { EVENT_TYPES } from '../core/events.js';
import { requireCustomerTenant } from '../core/identifiers.js';
import { DELIVERY_STATUSES, rotateSecrets, type DeliveryStatus } from '../core/webhook-retry.js';
import type { WebhookDelivery, WebhookEndpoint, WebhookStore } from '../store/port/webhooks.js';
import type { QuotaStore } from '../store/store.js';
import { systemClock } from './system-clock.js';

/** Random bytes in a signing secret (docs/design/rules.md#h8): 32, above the 24 the guide asks of a receiver. */
export const WEBHOOK_SECRET_BYTES = 32;

/** How long the old secrets keep signing after a rotation unless told, in ms: 24 hours (docs/design/rules.md#h10). */
export const DEFAULT_ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** The longest overlap a rotation takes, in ms: 30 days. */
export const MAX_ROTATION_OVERLAP_MS = 30 * 24 * 3_600_000;

/** The most deliveries one listing answers; the default is 100. */
export const MAX_DELIVERY_PAGE = 1000;

const ENDPOINT_ID = /^wh_[0-9A-HJKMNP-TV-Z]{26}$/;
const DELIVERY_ID = /^wh_[0-9A-HJKMNP-TV-Z]{26}\.[0-9]{1,16}$/;

/** An endpoint as listed: its secrets are never shown, only how many sign now and when the others end. */
export interface WebhookEndpointView {
  readonly id: string;
  readonly tenant: string | null;
  readonly url: string;
  readonly eventTypes: readonly string[] | null;
  readonly createdAtMs: number;
  /** Each secret's life, newest first, without the secret itself. */
  readonly secrets: readonly { readonly addedAtMs: number; readonly expiresAtMs: number | null }[];
}

/** What an added or rotated endpoint answers: the endpoint and its new secret, shown this once. */
export interface WebhookSecretIssued {
  readonly endpoint: WebhookEndpointView;
  /** `whsec_` and the base64 of {@link WEBHOOK_SECRET_BYTES} random bytes. */
  readonly secret: string;
}

/** What to add: `tenant` (`null`: every tenant's events and the plane's), an http(s) `url`, and `eventTypes` (omitted or `null`: all). */
export interface AddWebhookInput {
  readonly tenant: string | null;
  readonly url: string;
  readonly eventTypes?: readonly string[] | null | undefined;
}

/**
 * The operator's acts on webhook endpoints (docs/design/rules.md#h1–#h12), from {@link createWebhooks}.
 * Every input is checked here: a bad one throws `INVALID_ARGUMENT` naming the field; an unknown
 * endpoint or delivery throws `NOT_FOUND`; a store without webhooks throws `STORE_MISCONFIGURED`.
 */
export interface WebhookAdmin {
  /** Adds an endpoint, starting after the newest event (no history is replayed; #h1); answers its first secret. */
  add(input: AddWebhookInput): Promise<WebhookSecretIssued>;
  /** Every endpoint, oldest first; of `tenant` only when given (`null`: the plane-wide ones). */
  list(tenant?: string | null): Promise<WebhookEndpointView[]>;
  /** The endpoint `id`; `NOT_FOUND` when there is none. */
  get(id: string): Promise<WebhookEndpointView>;
  /** Removes an endpoint and its deliveries. */
  remove(id: string): Promise<void>;
  /**
   * Adds a new secret; the secrets signing now keep signing for `overlapMs` more (default
   * {@link DEFAULT_ROTATION_OVERLAP_MS}, 0 ends them at once; #h10). Answers the new secret.
   */
  rotate(id: string, overlapMs?: number): Promise<WebhookSecretIssued>;
  /** The endpoint's deliveries, newest event first, of one `status` when given, at most `limit` (default 100; #h11). */
  deliveries(id: string, options?: { readonly status?: DeliveryStatus | undefined; readonly limit?: number | undefined }): Promise<WebhookDelivery[]>;
  /** Makes a failed (or delivered) delivery due now again, under the same `webhook-id` (#h12). `CONFLICT` while it is pending. */
  resend(deliveryId: string): Promise<WebhookDelivery>;
}

/** Options of {@link createWebhooks}: the store, a clock (default the system's), random bytes for secrets, and a `nudge` called after an act that makes a delivery due. */
export interface WebhookAdminOptions {
  readonly store: QuotaStore;
  readonly clock?: Clock | undefined;
  readonly randomBytes?: ((size: number) => Uint8Array) | undefined;
  readonly nudge?: (() => void) | undefined;
}

/** The store's webhooks, or `STORE_MISCONFIGURED` naming the backend. */
export function webhookStoreOf(store: QuotaStore): WebhookStore {
  const webhooks = store.webhooks?.();
  if (webhooks === undefined) {
    throw new QuotaError('STORE_MISCONFIGURED', `the ${store.backend} store keeps no webhooks; use the SQLite or PostgreSQL store`);
  }
  return webhooks;
}

/** `whsec_` and the base64 of {@link WEBHOOK_SECRET_BYTES} bytes of `randomBytes` (docs/design/rules.md#h8). */
export function newWebhookSecret(randomBytes: (size: number) => Uint8Array = cryptoRandomBytes): string {
  return `whsec_${Buffer.from(randomBytes(WEBHOOK_SECRET_BYTES)).toString('base64')}`;
}

/** Throws `INVALID_ARGUMENT` naming `field` unless `value` is an absolute http: or https: URL of at most 2048 characters. */
export function requireWebhookUrl(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length > 2048 || !URL.canParse(value) || !['http:', 'https:'].includes(new URL(value).protocol)) {
    throw invalidArgument(field, `must be an absolute http:// or https:// URL of at most 2048 characters, got ${describe(value)}`);
  }
  return value;
}

function requireEventTypes(value: unknown): readonly string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0 || !value.every((type) => (EVENT_TYPES as readonly string[]).includes(type as string))) {
    throw invalidArgument('eventTypes', `must be a non-empty list of ${EVENT_TYPES.join(', ')}, or omitted for every type; got ${describe(value)}`);
  }
  return [...new Set(value as string[])];
}

function requireEndpointId(value: unknown): string {
  if (typeof value !== 'string' || !ENDPOINT_ID.test(value)) throw invalidArgument('id', `must be a webhook endpoint id (wh_<ULID>), got ${describe(value)}`);
  return value;
}

/** Throws `INVALID_ARGUMENT` naming `deliveryId` unless `value` is a delivery id (`wh_<ULID>.<event seq>`). */
export function requireDeliveryId(value: unknown): string {
  if (typeof value !== 'string' || !DELIVERY_ID.test(value)) {
    throw invalidArgument('deliveryId', `must be a delivery id (wh_<ULID>.<event seq>, as listed by deliveries), got ${describe(value)}`);
  }
  return value;
}

function requireTenantOrPlane(value: unknown): string | null {
  return value === null ? null : requireCustomerTenant('tenant', value);
}

function view(endpoint: WebhookEndpoint): WebhookEndpointView {
  return {
    id: endpoint.id,
    tenant: endpoint.tenant,
    url: endpoint.url,
    eventTypes: endpoint.eventTypes,
    createdAtMs: endpoint.createdAtMs,
    secrets: [...endpoint.secrets].sort((a, b) => b.addedAtMs - a.addedAtMs).map(({ addedAtMs, expiresAtMs }) => ({ addedAtMs, expiresAtMs })),
  };
}

function notFound(what: string, id: string): QuotaError {
  return new QuotaError('NOT_FOUND', `no webhook ${what} '${id}'; list them with 'quotaplane webhooks ${what === 'endpoint' ? 'list' : 'deliveries'}'`, {
    details: { id },
  });
}

/**
 * The operator's acts on webhook endpoints over `store` (docs/design/rules.md#h1–#h12): see
 * {@link WebhookAdmin}. Deliveries themselves are made by a dispatcher (`createDispatcher`).
 * @example const hooks = createWebhooks({ store }); const { endpoint, secret } = await hooks.add({ tenant: 'acme', url: 'https://example.com/hook' });
 */
export function createWebhooks(options: WebhookAdminOptions): WebhookAdmin {
  const clock = options.clock ?? systemClock;
  const randomBytes = options.randomBytes ?? cryptoRandomBytes;
  const hooks = (): WebhookStore => webhookStoreOf(options.store);
  return {
    async add(input) {
      if (typeof input !== 'object' || input === null) throw invalidArgument('input', 'must be an object with tenant, url and optional eventTypes');
      const tenant = requireTenantOrPlane(input.tenant);
      const url = requireWebhookUrl('url', input.url);
      const eventTypes = requireEventTypes(input.eventTypes);
      // A misspelt tenant would never receive anything: refused, naming the nearest known one.
      if (tenant !== null) await requireExistingTenant(options.store, tenant, 'webhook', false);
      const secret = newWebhookSecret(randomBytes);
      const endpoint = await hooks().createEndpoint({ id: `wh_${ulid()}`, tenant, url, eventTypes, secret, createdAtMs: clock.nowMs() });
      return { endpoint: view(endpoint), secret };
    },
    async list(tenant) {
      const endpoints = await hooks().endpoints(tenant === undefined ? undefined : requireTenantOrPlane(tenant));
      return endpoints.map(view);
    },
    async get(id) {
      const endpoint = await hooks().endpoint(requireEndpointId(id));
      if (endpoint === null) throw notFound('endpoint', id);
      return view(endpoint);
    },
    async remove(id) {
      if (!(await hooks().removeEndpoint(requireEndpointId(id)))) throw notFound('endpoint', id);
    },
    async rotate(id, overlapMs = DEFAULT_ROTATION_OVERLAP_MS) {
      requireEndpointId(id);
      if (!Number.isSafeInteger(overlapMs) || overlapMs < 0 || overlapMs > MAX_ROTATION_OVERLAP_MS) {
        throw invalidArgument('overlapMs', `must be an integer number of ms from 0 to ${MAX_ROTATION_OVERLAP_MS} (30 days), got ${describe(overlapMs)}`);
      }
      const secret = newWebhookSecret(randomBytes);
      const nowMs = clock.nowMs();
      const endpoint = await hooks().rotateSecrets(id, (current) => rotateSecrets(current, secret, nowMs, overlapMs));
      if (endpoint === null) throw notFound('endpoint', id);
      return { endpoint: view(endpoint), secret };
    },
    async deliveries(id, { status, limit = 100 } = {}) {
      requireEndpointId(id);
      if (status !== undefined && !DELIVERY_STATUSES.includes(status)) {
        throw invalidArgument('status', `must be one of ${DELIVERY_STATUSES.join(', ')}, got ${describe(status)}`);
      }
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_DELIVERY_PAGE) {
        throw invalidArgument('limit', `must be an integer from 1 to ${MAX_DELIVERY_PAGE}, got ${describe(limit)}`);
      }
      if ((await hooks().endpoint(id)) === null) throw notFound('endpoint', id);
      return hooks().deliveries({ endpointId: id, status, limit });
    },
    async resend(deliveryId) {
      requireDeliveryId(deliveryId);
      const outcome = await hooks().resend(deliveryId, clock.nowMs());
      if (outcome === 'not-found') throw notFound('delivery', deliveryId);
      if (outcome === 'pending') {
        throw new QuotaError('CONFLICT', `delivery '${deliveryId}' is still pending: it is attempted on its own; resend it once it is failed or delivered`, {
          details: { id: deliveryId },
        });
      }
      options.nudge?.();
      return (await hooks().delivery(deliveryId))!;
    },
  };
}
