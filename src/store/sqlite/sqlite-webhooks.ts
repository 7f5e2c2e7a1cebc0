import type { QuotaEvent } from '../../core/events.js';
import { endpointReceives, isDeliveryDue, type WebhookSecret } from '../../core/webhook-retry.js';
import type {
  AttemptReport,
  ClaimedDelivery,
  DeliveryQuery,
  NewWebhookEndpoint,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookStore,
} from '../port/webhooks.js';
import {
  DELIVERY_COLUMNS,
  decodeDelivery,
  decodeEndpoint,
  deliveryId,
  ENDPOINT_COLUMNS,
  eventJson,
  type DeliveryRow,
  type EndpointRow,
} from '../webhook-rows.js';
import type { SqliteConnection } from './sqlite-connection.js';

const INSERT_ENDPOINT = `INSERT INTO quotaplane_webhook_endpoints (${ENDPOINT_COLUMNS})
  VALUES (@id, @tenant, @url, @types, @secrets, (SELECT coalesce(max(seq), 0) FROM quota_events), @createdAtMs)`;
const SELECT_ENDPOINT = `SELECT ${ENDPOINT_COLUMNS} FROM quotaplane_webhook_endpoints WHERE endpoint_id = @id`;
const LIST_ENDPOINTS = `SELECT ${ENDPOINT_COLUMNS} FROM quotaplane_webhook_endpoints ORDER BY created_at_ms, endpoint_id`;
const DELETE_ENDPOINT = 'DELETE FROM quotaplane_webhook_endpoints WHERE endpoint_id = @id';
const DELETE_ENDPOINT_DELIVERIES = 'DELETE FROM quotaplane_webhook_deliveries WHERE endpoint_id = @id';
const UPDATE_SECRETS = 'UPDATE quotaplane_webhook_endpoints SET secrets_json = @secrets WHERE endpoint_id = @id';
const LOWEST_CURSOR = 'SELECT min(after_seq) AS seq FROM quotaplane_webhook_endpoints';
const MOVE_CURSOR = 'UPDATE quotaplane_webhook_endpoints SET after_seq = @seq WHERE endpoint_id = @id AND after_seq < @seq';
const INSERT_DELIVERY = `INSERT OR IGNORE INTO quotaplane_webhook_deliveries
  (delivery_id, endpoint_id, tenant, event_seq, event_json, status, attempts, due_at_ms, claim, created_at_ms)
  VALUES (@id, @endpointId, @tenant, @seq, @event, 'pending', 0, @atMs, NULL, @atMs)`;
/** Candidates by the (status, due_at_ms) index; core `isDeliveryDue` decides. */
const SELECT_DUE = `SELECT ${DELIVERY_COLUMNS} FROM quotaplane_webhook_deliveries
  WHERE status = 'pending' AND due_at_ms <= @nowMs ORDER BY due_at_ms, delivery_id LIMIT @limit`;
/** Whether any candidate is there: a read, so a round with nothing due takes no write lock. */
const ANY_DUE = "SELECT EXISTS (SELECT 1 FROM quotaplane_webhook_deliveries WHERE status = 'pending' AND due_at_ms <= @nowMs) AS due";
const CLAIM = 'UPDATE quotaplane_webhook_deliveries SET due_at_ms = @untilMs, claim = @claim WHERE delivery_id = @id';
const SELECT_CLAIM = "SELECT claim, attempts FROM quotaplane_webhook_deliveries WHERE delivery_id = @id AND status = 'pending'";
const RECORD = `UPDATE quotaplane_webhook_deliveries SET status = @status, attempts = attempts + 1, due_at_ms = @dueAtMs,
  claim = NULL, last_attempt_at_ms = @atMs, last_result = @result, delivered_at_ms = @deliveredAtMs WHERE delivery_id = @id`;
const SELECT_DELIVERY = `SELECT ${DELIVERY_COLUMNS} FROM quotaplane_webhook_deliveries WHERE delivery_id = @id`;
const LIST_DELIVERIES = `SELECT ${DELIVERY_COLUMNS} FROM quotaplane_webhook_deliveries
  WHERE endpoint_id = @endpointId AND (@status IS NULL OR status = @status) ORDER BY event_seq DESC LIMIT @limit`;
const RESEND = `UPDATE quotaplane_webhook_deliveries SET status = 'pending', attempts = 0, due_at_ms = @nowMs, claim = NULL,
  delivered_at_ms = NULL WHERE delivery_id = @id`;
const OLDEST_PENDING = "SELECT min(created_at_ms) AS at_ms FROM quotaplane_webhook_deliveries WHERE status = 'pending'";

/**
 * The SQLite adapter of {@link WebhookStore} (`quotaplane_webhook_endpoints`,
 * `quotaplane_webhook_deliveries`), on the store's one connection. Every write is one
 * `BEGIN IMMEDIATE` transaction, so a claim is exact across processes sharing the file.
 */
export class SqliteWebhookStore implements WebhookStore {
  readonly #conn: SqliteConnection;

  constructor(conn: SqliteConnection) {
    this.#conn = conn;
  }

  async createEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    return this.#conn.write(() => {
      this.#conn.run(INSERT_ENDPOINT, {
        id: endpoint.id,
        tenant: endpoint.tenant,
        url: endpoint.url,
        types: endpoint.eventTypes === null ? null : JSON.stringify(endpoint.eventTypes),
        secrets: JSON.stringify([{ secret: endpoint.secret, addedAtMs: endpoint.createdAtMs, expiresAtMs: null }]),
        createdAtMs: endpoint.createdAtMs,
      });
      return decodeEndpoint(this.#conn.get<EndpointRow>(SELECT_ENDPOINT, { id: endpoint.id })!);
    });
  }

  async endpoint(id: string): Promise<WebhookEndpoint | null> {
    const row = await this.#conn.read(() => this.#conn.get<EndpointRow>(SELECT_ENDPOINT, { id }));
    return row === undefined ? null : decodeEndpoint(row);
  }

  async endpoints(tenant?: string | null): Promise<WebhookEndpoint[]> {
    const all = (await this.#conn.read(() => this.#conn.all<EndpointRow>(LIST_ENDPOINTS, {}))).map(decodeEndpoint);
    return tenant === undefined ? all : all.filter((endpoint) => endpoint.tenant === tenant);
  }

  async removeEndpoint(id: string): Promise<boolean> {
    return this.#conn.write(() => {
      this.#conn.run(DELETE_ENDPOINT_DELIVERIES, { id });
      return this.#conn.run(DELETE_ENDPOINT, { id }) > 0;
    });
  }

  async rotateSecrets(id: string, rotate: (current: readonly WebhookSecret[]) => readonly WebhookSecret[]): Promise<WebhookEndpoint | null> {
    return this.#conn.write(() => {
      const row = this.#conn.get<EndpointRow>(SELECT_ENDPOINT, { id });
      if (row === undefined) return null;
      this.#conn.run(UPDATE_SECRETS, { id, secrets: JSON.stringify(rotate(decodeEndpoint(row).secrets)) });
      return decodeEndpoint(this.#conn.get<EndpointRow>(SELECT_ENDPOINT, { id })!);
    });
  }

  async lowestCursor(): Promise<number | null> {
    return (await this.#conn.read(() => this.#conn.get<{ seq: number | null }>(LOWEST_CURSOR, {})))?.seq ?? null;
  }

  async fanOut(afterSeq: number, events: readonly QuotaEvent[], atMs: number): Promise<number> {
    const last = events.at(-1);
    if (last === undefined) return 0;
    return this.#conn.write(() => {
      let made = 0;
      for (const endpoint of this.#conn.all<EndpointRow>(LIST_ENDPOINTS, {}).map(decodeEndpoint)) {
        // An endpoint behind the events read would miss those between: the next fan-out reads from it.
        if (endpoint.afterSeq < afterSeq || endpoint.afterSeq >= last.seq) continue;
        for (const event of events) {
          if (event.seq <= endpoint.afterSeq || !endpointReceives(endpoint, event)) continue;
          made += this.#conn.run(INSERT_DELIVERY, {
            id: deliveryId(endpoint.id, event.seq),
            endpointId: endpoint.id,
            tenant: endpoint.tenant,
            seq: event.seq,
            event: eventJson(event),
            atMs,
          });
        }
        this.#conn.run(MOVE_CURSOR, { id: endpoint.id, seq: last.seq });
      }
      return made;
    });
  }

  async claimDue(nowMs: number, leaseMs: number, limit: number, claim: string): Promise<ClaimedDelivery[]> {
    if ((await this.#conn.read(() => this.#conn.get<{ due: number }>(ANY_DUE, { nowMs })))?.due !== 1) return [];
    return this.#conn.write(() => {
      const claimed: ClaimedDelivery[] = [];
      const endpoints = new Map<string, WebhookEndpoint | null>();
      for (const delivery of this.#conn.all<DeliveryRow>(SELECT_DUE, { nowMs, limit }).map(decodeDelivery)) {
        if (!isDeliveryDue(delivery, nowMs)) continue;
        if (!endpoints.has(delivery.endpointId)) {
          const row = this.#conn.get<EndpointRow>(SELECT_ENDPOINT, { id: delivery.endpointId });
          endpoints.set(delivery.endpointId, row === undefined ? null : decodeEndpoint(row));
        }
        const endpoint = endpoints.get(delivery.endpointId);
        if (endpoint === null || endpoint === undefined) continue;
        this.#conn.run(CLAIM, { id: delivery.id, untilMs: nowMs + leaseMs, claim });
        claimed.push({ delivery: { ...delivery, dueAtMs: nowMs + leaseMs }, url: endpoint.url, secrets: endpoint.secrets, claim });
      }
      return claimed;
    });
  }

  async recordAttempt(report: AttemptReport): Promise<boolean> {
    return this.#conn.write(() => {
      const row = this.#conn.get<{ claim: string | null }>(SELECT_CLAIM, { id: report.deliveryId });
      if (row === undefined || row.claim !== report.claim) return false;
      const { outcome } = report;
      this.#conn.run(RECORD, {
        id: report.deliveryId,
        status: outcome.kind === 'retry' ? 'pending' : outcome.kind,
        dueAtMs: outcome.kind === 'retry' ? outcome.dueAtMs : report.atMs,
        atMs: report.atMs,
        result: report.result,
        deliveredAtMs: outcome.kind === 'delivered' ? report.atMs : null,
      });
      return true;
    });
  }

  async deliveries(query: DeliveryQuery): Promise<WebhookDelivery[]> {
    const rows = await this.#conn.read(() =>
      this.#conn.all<DeliveryRow>(LIST_DELIVERIES, { endpointId: query.endpointId, status: query.status ?? null, limit: query.limit }),
    );
    return rows.map(decodeDelivery);
  }

  async delivery(id: string): Promise<WebhookDelivery | null> {
    const row = await this.#conn.read(() => this.#conn.get<DeliveryRow>(SELECT_DELIVERY, { id }));
    return row === undefined ? null : decodeDelivery(row);
  }

  async resend(id: string, nowMs: number): Promise<'resent' | 'pending' | 'not-found'> {
    return this.#conn.write(() => {
      const row = this.#conn.get<DeliveryRow>(SELECT_DELIVERY, { id });
      if (row === undefined) return 'not-found';
      if (row.status === 'pending') return 'pending';
      this.#conn.run(RESEND, { id, nowMs });
      return 'resent';
    });
  }

  async oldestPendingAtMs(): Promise<number | null> {
    return (await this.#conn.read(() => this.#conn.get<{ at_ms: number | null }>(OLDEST_PENDING, {})))?.at_ms ?? null;
  }
}
