import type { NewEvent, QuotaEvent } from '../../core/events.js';
import { decodeEvent, eventColumns, type EventRow } from '../event-rows.js';
import type { SqliteConnection } from './sqlite-connection.js';

/*
 * The event log on SQLite (docs/design/rules.md#e1, #e8). Mirrors postgres-events.ts.
 */

const INSERT_EVENT = `INSERT INTO quota_events (id, event_key, tenant, type, at_ms, data_json)
  VALUES (@id, @event_key, @tenant, @type, @at_ms, @data_json) ON CONFLICT (tenant, retired_by, event_key) DO NOTHING`;

const EVENTS_AFTER = `SELECT seq, id, event_key, tenant, type, at_ms, data_json FROM quota_events
  WHERE seq > @afterSeq ORDER BY seq LIMIT @limit`;

const TENANT_EVENTS_AFTER = `SELECT seq, id, event_key, tenant, type, at_ms, data_json FROM quota_events
  WHERE tenant = @tenant AND retired_by = 0 AND seq > @afterSeq ORDER BY seq LIMIT @limit`;

const NEWEST_EVENTS = `SELECT seq, id, event_key, tenant, type, at_ms, data_json FROM quota_events
  ORDER BY seq DESC LIMIT @limit`;

const TENANT_NEWEST_EVENTS = `SELECT seq, id, event_key, tenant, type, at_ms, data_json FROM quota_events
  WHERE tenant = @tenant AND retired_by = 0 ORDER BY seq DESC LIMIT @limit`;

/** Appends `event` inside the caller's `BEGIN IMMEDIATE` transaction, unless its id is there already. */
export function appendEventInTransaction(conn: SqliteConnection, event: NewEvent): void {
  conn.run(INSERT_EVENT, { ...eventColumns(event) });
}

/** Up to `limit` events after `afterSeq`, oldest first, of `tenant` only when given (port/events.ts `eventsAfter`). */
export function readEventsAfter(conn: SqliteConnection, afterSeq: number, limit: number, tenant: string | undefined): QuotaEvent[] {
  const rows = tenant === undefined ? conn.all<EventRow>(EVENTS_AFTER, { afterSeq, limit }) : conn.all<EventRow>(TENANT_EVENTS_AFTER, { tenant, afterSeq, limit });
  return rows.map(decodeEvent);
}

/** The newest `limit` events, oldest first, of `tenant` only when given (port/events.ts `newestEvents`). */
export function readNewestEvents(conn: SqliteConnection, limit: number, tenant: string | undefined): QuotaEvent[] {
  const rows = tenant === undefined ? conn.all<EventRow>(NEWEST_EVENTS, { limit }) : conn.all<EventRow>(TENANT_NEWEST_EVENTS, { tenant, limit });
  return rows.reverse().map(decodeEvent);
}
