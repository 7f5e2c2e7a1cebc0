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
import type { PostgresConnection } from './postgres-connection.js';

/**
 * The PostgreSQL adapter of {@link WebhookStore} (`quotaplane_webhook_endpoints`,
 * `quotaplane_webhook_deliveries`), on the store's pool; the same behaviour as the SQLite adapter.
 * A claim takes its rows `FOR UPDATE SKIP LOCKED`, so instances claiming together never take the
 * same delivery; a fan-out locks the endpoint rows, so two fan-outs of one event serialise.
 */
export class PostgresWebhookStore implements WebhookStore {
  readonly #db: PostgresConnection;
  readonly #s: string;

  /** `s` is the quoted schema name. */
  constructor(db: PostgresConnection, s: string) {
    this.#db = db;
    this.#s = s;
  }

  async createEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    const row = await this.#db.row<EndpointRow>(
      `INSERT INTO ${this.#s}.quotaplane_webhook_endpoints (${ENDPOINT_COLUMNS})
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, (SELECT coalesce(max(seq), 0) FROM ${this.#s}.quota_events), $6)
       RETURNING ${ENDPOINT_COLUMNS}`,
      [
        endpoint.id,
        endpoint.tenant,
        endpoint.url,
        endpoint.eventTypes === null ? null : JSON.stringify(endpoint.eventTypes),
        JSON.stringify([{ secret: endpoint.secret, addedAtMs: endpoint.createdAtMs, expiresAtMs: null }]),
        endpoint.createdAtMs,
      ],
    );
    return decodeEndpoint(row!);
  }

  async endpoint(id: string): Promise<WebhookEndpoint | null> {
    const row = await this.#db.row<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM ${this.#s}.quotaplane_webhook_endpoints WHERE endpoint_id = $1`, [id]);
    return row === undefined ? null : decodeEndpoint(row);
  }

  async endpoints(tenant?: string | null): Promise<WebhookEndpoint[]> {
    const rows = await this.#db.rows<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM ${this.#s}.quotaplane_webhook_endpoints ORDER BY created_at_ms, endpoint_id`,
      [],
    );
    const all = rows.map(decodeEndpoint);
    return tenant === undefined ? all : all.filter((endpoint) => endpoint.tenant === tenant);
  }

  async removeEndpoint(id: string): Promise<boolean> {
    return this.#db.transaction(async (tx) => {
      await tx.run(`DELETE FROM ${this.#s}.quotaplane_webhook_deliveries WHERE endpoint_id = $1`, [id]);
      return (await tx.run(`DELETE FROM ${this.#s}.quotaplane_webhook_endpoints WHERE endpoint_id = $1`, [id])) > 0;
    });
  }

  async rotateSecrets(id: string, rotate: (current: readonly WebhookSecret[]) => readonly WebhookSecret[]): Promise<WebhookEndpoint | null> {
    return this.#db.transaction(async (tx) => {
      const [row] = await tx.rows<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM ${this.#s}.quotaplane_webhook_endpoints WHERE endpoint_id = $1 FOR UPDATE`,
        [id],
      );
      if (row === undefined) return null;
      const [after] = await tx.rows<EndpointRow>(
        `UPDATE ${this.#s}.quotaplane_webhook_endpoints SET secrets_json = $2::jsonb WHERE endpoint_id = $1 RETURNING ${ENDPOINT_COLUMNS}`,
        [id, JSON.stringify(rotate(decodeEndpoint(row).secrets))],
      );
      return decodeEndpoint(after!);
    });
  }

  async lowestCursor(): Promise<number | null> {
    const row = await this.#db.row<{ seq: number | null }>(`SELECT min(after_seq) AS seq FROM ${this.#s}.quotaplane_webhook_endpoints`, []);
    return row?.seq ?? null;
  }

  async fanOut(afterSeq: number, events: readonly QuotaEvent[], atMs: number): Promise<number> {
    const last = events.at(-1);
    if (last === undefined) return 0;
    return this.#db.transaction(async (tx) => {
      const rows = await tx.rows<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM ${this.#s}.quotaplane_webhook_endpoints
         WHERE after_seq >= $1 AND after_seq < $2 ORDER BY endpoint_id FOR UPDATE`,
        [afterSeq, last.seq],
      );
      const ids: string[] = [];
      const endpointIds: string[] = [];
      const tenants: (string | null)[] = [];
      const seqs: number[] = [];
      const bodies: string[] = [];
      for (const endpoint of rows.map(decodeEndpoint)) {
        for (const event of events) {
          if (event.seq <= endpoint.afterSeq || !endpointReceives(endpoint, event)) continue;
          ids.push(deliveryId(endpoint.id, event.seq));
          endpointIds.push(endpoint.id);
          tenants.push(endpoint.tenant);
          seqs.push(event.seq);
          bodies.push(eventJson(event));
        }
      }
      const made =
        ids.length === 0
          ? 0
          : await tx.run(
              `INSERT INTO ${this.#s}.quotaplane_webhook_deliveries
                 (delivery_id, endpoint_id, tenant, event_seq, event_json, status, attempts, due_at_ms, claim, created_at_ms)
               SELECT d.id, d.endpoint_id, d.tenant, d.seq, d.event::jsonb, 'pending', 0, $6, NULL, $6
               FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[]) AS d(id, endpoint_id, tenant, seq, event)
               ON CONFLICT DO NOTHING`,
              [ids, endpointIds, tenants, seqs, bodies, atMs],
            );
      if (rows.length > 0) {
        await tx.run(`UPDATE ${this.#s}.quotaplane_webhook_endpoints SET after_seq = $2 WHERE endpoint_id = ANY($1::text[]) AND after_seq < $2`, [
          rows.map((row) => row.endpoint_id),
          last.seq,
        ]);
      }
      return made;
    });
  }

  async claimDue(nowMs: number, leaseMs: number, limit: number, claim: string): Promise<ClaimedDelivery[]> {
    // One read first, so a round with nothing due opens no transaction.
    const any = await this.#db.row<{ due: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.#s}.quotaplane_webhook_deliveries WHERE status = 'pending' AND due_at_ms <= $1) AS due`,
      [nowMs],
    );
    if (any?.due !== true) return [];
    return this.#db.transaction(async (tx) => {
      // Candidates by the (status, due_at_ms) index, skipping rows another claimer holds; core decides.
      const rows = await tx.rows<DeliveryRow & { url: string; secrets_json: unknown; tenant: string | null; event_types_json: unknown; after_seq: number; ep_created_at_ms: number }>(
        `SELECT ${DELIVERY_COLUMNS.split(', ').map((column) => `d.${column}`).join(', ')},
                e.url, e.secrets_json, e.tenant, e.event_types_json, e.after_seq, e.created_at_ms AS ep_created_at_ms
         FROM ${this.#s}.quotaplane_webhook_deliveries d
         JOIN ${this.#s}.quotaplane_webhook_endpoints e ON e.endpoint_id = d.endpoint_id
         WHERE d.status = 'pending' AND d.due_at_ms <= $1
         ORDER BY d.due_at_ms, d.delivery_id LIMIT $2
         FOR UPDATE OF d SKIP LOCKED`,
        [nowMs, limit],
      );
      const claimed: ClaimedDelivery[] = [];
      for (const row of rows) {
        const delivery = decodeDelivery(row);
        if (!isDeliveryDue(delivery, nowMs)) continue;
        const endpoint = decodeEndpoint({ ...row, created_at_ms: row.ep_created_at_ms });
        claimed.push({ delivery: { ...delivery, dueAtMs: nowMs + leaseMs }, url: endpoint.url, secrets: endpoint.secrets, claim });
      }
      if (claimed.length > 0) {
        await tx.run(`UPDATE ${this.#s}.quotaplane_webhook_deliveries SET due_at_ms = $2, claim = $3 WHERE delivery_id = ANY($1::text[])`, [
          claimed.map((one) => one.delivery.id),
          nowMs + leaseMs,
          claim,
        ]);
      }
      return claimed;
    });
  }

  async recordAttempt(report: AttemptReport): Promise<boolean> {
    const { outcome } = report;
    const changed = await this.#db.run(
      `UPDATE ${this.#s}.quotaplane_webhook_deliveries SET status = $3, attempts = attempts + 1, due_at_ms = $4, claim = NULL,
         last_attempt_at_ms = $5, last_result = $6, delivered_at_ms = $7
       WHERE delivery_id = $1 AND claim = $2 AND status = 'pending'`,
      [
        report.deliveryId,
        report.claim,
        outcome.kind === 'retry' ? 'pending' : outcome.kind,
        outcome.kind === 'retry' ? outcome.dueAtMs : report.atMs,
        report.atMs,
        report.result,
        outcome.kind === 'delivered' ? report.atMs : null,
      ],
    );
    return changed > 0;
  }

  async deliveries(query: DeliveryQuery): Promise<WebhookDelivery[]> {
    const rows = await this.#db.rows<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM ${this.#s}.quotaplane_webhook_deliveries
       WHERE endpoint_id = $1 AND ($2::text IS NULL OR status = $2) ORDER BY event_seq DESC LIMIT $3`,
      [query.endpointId, query.status ?? null, query.limit],
    );
    return rows.map(decodeDelivery);
  }

  async delivery(id: string): Promise<WebhookDelivery | null> {
    const row = await this.#db.row<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM ${this.#s}.quotaplane_webhook_deliveries WHERE delivery_id = $1`, [id]);
    return row === undefined ? null : decodeDelivery(row);
  }

  async resend(id: string, nowMs: number): Promise<'resent' | 'pending' | 'not-found'> {
    const row = await this.#db.row<{ status: string | null; resent: boolean }>(
      `WITH found AS (SELECT status FROM ${this.#s}.quotaplane_webhook_deliveries WHERE delivery_id = $1),
            moved AS (UPDATE ${this.#s}.quotaplane_webhook_deliveries SET status = 'pending', attempts = 0, due_at_ms = $2, claim = NULL,
                        delivered_at_ms = NULL
                      WHERE delivery_id = $1 AND status <> 'pending' RETURNING delivery_id)
       SELECT (SELECT status FROM found) AS status, EXISTS (SELECT 1 FROM moved) AS resent`,
      [id, nowMs],
    );
    if (row === undefined || row.status === null) return 'not-found';
    return row.resent ? 'resent' : 'pending';
  }

  async oldestPendingAtMs(): Promise<number | null> {
    const row = await this.#db.row<{ at_ms: number | null }>(
      `SELECT min(created_at_ms) AS at_ms FROM ${this.#s}.quotaplane_webhook_deliveries WHERE status = 'pending'`,
      [],
    );
    return row?.at_ms ?? null;
  }
}
