/*
 * Reading webhook rows back (both adapters): an endpoint or delivery that cannot be read as
 * written is `STORE_CORRUPT`, never skipped (docs/design/architecture.md, "The store port").
 */
import { QuotaError } from '../core/errors.js';
import { EVENT_TYPES, type EventType, type QuotaEvent } from '../core/events.js';
import { DELIVERY_STATUSES, type DeliveryStatus, type WebhookSecret } from '../core/webhook-retry.js';
import type { WebhookDelivery, WebhookEndpoint } from './port/webhooks.js';

/** An endpoint row as both adapters select it; JSON columns arrive as text (SQLite) or parsed (PostgreSQL). */
export interface EndpointRow {
  readonly endpoint_id: string;
  readonly tenant: string | null;
  readonly url: string;
  readonly event_types_json: unknown;
  readonly secrets_json: unknown;
  readonly after_seq: number;
  readonly created_at_ms: number;
}

/** A delivery row as both adapters select it. */
export interface DeliveryRow {
  readonly delivery_id: string;
  readonly endpoint_id: string;
  readonly event_json: unknown;
  readonly status: string;
  readonly attempts: number;
  readonly due_at_ms: number;
  readonly created_at_ms: number;
  readonly last_attempt_at_ms: number | null;
  readonly last_result: string | null;
  readonly delivered_at_ms: number | null;
}

/** The endpoint columns, in the order of {@link EndpointRow}. */
export const ENDPOINT_COLUMNS = 'endpoint_id, tenant, url, event_types_json, secrets_json, after_seq, created_at_ms';

/** The delivery columns, in the order of {@link DeliveryRow}. */
export const DELIVERY_COLUMNS =
  'delivery_id, endpoint_id, event_json, status, attempts, due_at_ms, created_at_ms, last_attempt_at_ms, last_result, delivered_at_ms';

/** The delivery id of `event` owed to `endpointId`: `<endpoint id>.<event seq>`. */
export function deliveryId(endpointId: string, seq: number): string {
  return `${endpointId}.${seq}`;
}

function corrupt(what: string, id: string): QuotaError {
  return new QuotaError('STORE_CORRUPT', `the store holds an unreadable webhook ${what} '${id}'`, { details: { id } });
}

function json(value: unknown): unknown {
  return typeof value === 'string' ? JSON.parse(value) : value;
}

const isInstant = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

function decodeSecrets(value: unknown, id: string): WebhookSecret[] {
  if (!Array.isArray(value)) throw corrupt('endpoint', id);
  return value.map((one: unknown) => {
    const secret = one as Partial<WebhookSecret> | null;
    if (
      secret === null ||
      typeof secret.secret !== 'string' ||
      !isInstant(secret.addedAtMs) ||
      (secret.expiresAtMs !== null && !isInstant(secret.expiresAtMs))
    ) {
      throw corrupt('endpoint', id);
    }
    return { secret: secret.secret, addedAtMs: secret.addedAtMs, expiresAtMs: secret.expiresAtMs ?? null };
  });
}

/** An endpoint row as the port's value; throws `STORE_CORRUPT` on a row that does not read back. */
export function decodeEndpoint(row: EndpointRow): WebhookEndpoint {
  try {
    const types = json(row.event_types_json);
    if (types !== null && (!Array.isArray(types) || !types.every((type) => typeof type === 'string'))) throw corrupt('endpoint', row.endpoint_id);
    if (!isInstant(row.after_seq) || !isInstant(row.created_at_ms)) throw corrupt('endpoint', row.endpoint_id);
    return {
      id: row.endpoint_id,
      tenant: row.tenant,
      url: row.url,
      eventTypes: types as string[] | null,
      secrets: decodeSecrets(json(row.secrets_json), row.endpoint_id),
      afterSeq: row.after_seq,
      createdAtMs: row.created_at_ms,
    };
  } catch (error) {
    if (error instanceof QuotaError) throw error;
    throw corrupt('endpoint', row.endpoint_id);
  }
}

/** A delivery row as the port's value; throws `STORE_CORRUPT` on a row that does not read back. */
export function decodeDelivery(row: DeliveryRow): WebhookDelivery {
  try {
    const event = json(row.event_json) as Partial<QuotaEvent> | null;
    if (
      event === null ||
      typeof event.id !== 'string' ||
      typeof event.key !== 'string' ||
      !isInstant(event.seq) ||
      !isInstant(event.atMs) ||
      !(EVENT_TYPES as readonly string[]).includes(event.type as string) ||
      (event.tenant !== null && typeof event.tenant !== 'string') ||
      typeof event.data !== 'object' ||
      event.data === null ||
      !(DELIVERY_STATUSES as readonly string[]).includes(row.status) ||
      !isInstant(row.attempts) ||
      !isInstant(row.due_at_ms)
    ) {
      throw corrupt('delivery', row.delivery_id);
    }
    return {
      id: row.delivery_id,
      endpointId: row.endpoint_id,
      event: { seq: event.seq, id: event.id, key: event.key, type: event.type as EventType, tenant: event.tenant ?? null, atMs: event.atMs, data: event.data },
      status: row.status as DeliveryStatus,
      attempts: row.attempts,
      dueAtMs: row.due_at_ms,
      createdAtMs: row.created_at_ms,
      lastAttemptAtMs: row.last_attempt_at_ms,
      lastResult: row.last_result,
      deliveredAtMs: row.delivered_at_ms,
    };
  } catch (error) {
    if (error instanceof QuotaError) throw error;
    throw corrupt('delivery', row.delivery_id);
  }
}

/** The event as a delivery row keeps it. */
export function eventJson(event: QuotaEvent): string {
  return JSON.stringify({ id: event.id, key: event.key, seq: event.seq, type: event.type, tenant: event.tenant, atMs: event.atMs, data: event.data });
}
