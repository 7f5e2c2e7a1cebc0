import type { QuotaEvent } from '../../core/events.js';
import type { DeliveryStatus, WebhookSecret } from '../../core/webhook-retry.js';

/**
 * A webhook endpoint (docs/design/rules.md#h1): where events are delivered.
 * - `id`: `wh_<ULID>`; `tenant`: the tenant whose events it receives, or `null` for every tenant's
 *   events and the plane's own.
 * - `eventTypes`: the event types it receives, or `null` for all.
 * - `secrets`: the secrets that sign its deliveries, with their expiry (docs/design/rules.md#h9).
 * - `afterSeq`: its cursor, the last event position fanned out to it.
 */
export interface WebhookEndpoint {
  readonly id: string;
  readonly tenant: string | null;
  readonly url: string;
  readonly eventTypes: readonly string[] | null;
  readonly secrets: readonly WebhookSecret[];
  readonly afterSeq: number;
  readonly createdAtMs: number;
}

/** An endpoint to create: its first secret signs from `createdAtMs`, and it starts after the newest event. */
export interface NewWebhookEndpoint {
  readonly id: string;
  readonly tenant: string | null;
  readonly url: string;
  readonly eventTypes: readonly string[] | null;
  readonly secret: string;
  readonly createdAtMs: number;
}

/**
 * One event owed to one endpoint (docs/design/rules.md#h3): `id` is `<endpoint id>.<event seq>`;
 * the event is kept whole, so every attempt sends the same body under the event's id.
 * `dueAtMs`: when it may next be attempted (a claimed one's claim end). `lastResult`: what the last
 * attempt met (`HTTP 503`, `timeout after 10000 ms`, a network error), or `null`.
 */
export interface WebhookDelivery {
  readonly id: string;
  readonly endpointId: string;
  readonly event: QuotaEvent;
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly dueAtMs: number;
  readonly createdAtMs: number;
  readonly lastAttemptAtMs: number | null;
  readonly lastResult: string | null;
  readonly deliveredAtMs: number | null;
}

/** A delivery claimed for one attempt: where to send it and the endpoint's secrets as claimed; `claim` fences the report. */
export interface ClaimedDelivery {
  readonly delivery: WebhookDelivery;
  readonly url: string;
  readonly secrets: readonly WebhookSecret[];
  readonly claim: string;
}

/**
 * What one attempt came to, as the plane decided it with core/webhook-retry.ts:
 * `delivered`, `retry` at `dueAtMs`, or `failed` (out of attempts).
 */
export type AttemptOutcome =
  | { readonly kind: 'delivered' }
  | { readonly kind: 'retry'; readonly dueAtMs: number }
  | { readonly kind: 'failed' };

/** The report of one attempt of a claimed delivery, at `atMs`, with what it met (`result`). */
export interface AttemptReport {
  readonly deliveryId: string;
  readonly claim: string;
  readonly atMs: number;
  readonly outcome: AttemptOutcome;
  readonly result: string;
}

/** Which deliveries to list: of one endpoint, of one status, at most `limit`, newest event first. */
export interface DeliveryQuery {
  readonly endpointId: string;
  readonly status?: DeliveryStatus | undefined;
  readonly limit: number;
}

/**
 * The webhook endpoints and their deliveries (docs/design/rules.md#h1–#h12), a capability of the
 * whole store. Stores persist and return facts; every rule (who receives an event, due-ness,
 * backoff, which secrets sign) is decided in core/webhook-retry.ts. The plane validates every
 * argument before it reaches an adapter.
 */
export interface WebhookStore {
  /** Stores `endpoint` with its cursor at the newest event's position, in one transaction; answers it as stored. */
  createEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint>;
  /** The endpoint `id`, or `null`. */
  endpoint(id: string): Promise<WebhookEndpoint | null>;
  /** Every endpoint, oldest first; of `tenant` only when given (`null`: the plane-wide ones only). */
  endpoints(tenant?: string | null): Promise<WebhookEndpoint[]>;
  /** Removes the endpoint and its deliveries in one transaction; answers whether it existed. */
  removeEndpoint(id: string): Promise<boolean>;
  /**
   * Replaces the endpoint's secrets with `rotate(current)` in one transaction (a concurrent rotation
   * waits, then rotates what this one wrote); answers the endpoint after it, or `null` when absent.
   */
  rotateSecrets(id: string, rotate: (current: readonly WebhookSecret[]) => readonly WebhookSecret[]): Promise<WebhookEndpoint | null>;
  /** The lowest cursor of any endpoint, or `null` when there is none: where fan-out reads from. */
  lowestCursor(): Promise<number | null>;
  /**
   * Fans `events` (every event after `afterSeq`, oldest first, contiguous) out, in one transaction:
   * each endpoint whose cursor is at least `afterSeq` gets one pending delivery, due at `atMs`, of
   * each event past its cursor that it receives (core `endpointReceives`), and its cursor moves to
   * the last event's position. A delivery already there is kept as it is. Answers how many were made.
   */
  fanOut(afterSeq: number, events: readonly QuotaEvent[], atMs: number): Promise<number>;
  /**
   * Claims up to `limit` deliveries due at `nowMs` (core `isDeliveryDue`), oldest due first, for one
   * attempt each: each becomes due again only at `nowMs + leaseMs` and carries `claim`, so no other
   * claimer takes it meanwhile (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: `FOR UPDATE SKIP LOCKED`).
   */
  claimDue(nowMs: number, leaseMs: number, limit: number, claim: string): Promise<ClaimedDelivery[]>;
  /** Records an attempt if the delivery still carries `report.claim`; answers whether it did. */
  recordAttempt(report: AttemptReport): Promise<boolean>;
  /** Deliveries of one endpoint, newest event first (docs/design/rules.md#h11). */
  deliveries(query: DeliveryQuery): Promise<WebhookDelivery[]>;
  /** The delivery `id`, or `null`. */
  delivery(id: string): Promise<WebhookDelivery | null>;
  /**
   * Makes a `failed` or `delivered` delivery pending again, due at `nowMs`, with its attempts
   * counted from 0 (docs/design/rules.md#h12); answers `resent`, `pending` (left as it is) or `not-found`.
   */
  resend(id: string, nowMs: number): Promise<'resent' | 'pending' | 'not-found'>;
  /** When the oldest pending delivery was made, Unix ms, or `null` when none is pending. */
  oldestPendingAtMs(): Promise<number | null>;
}

/**
 * The webhooks of a store, a capability of the whole store (not of a tenant handle). Optional so a
 * third-party store keeps compiling; both built-in adapters have it.
 */
export interface WebhooksCapability {
  /** The webhook endpoints and deliveries. Throws `STORE_UNAVAILABLE` once the store is closed. */
  webhooks?(): WebhookStore;
}
