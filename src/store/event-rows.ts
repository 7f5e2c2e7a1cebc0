import { EVENT_TYPES, type EventType, type NewEvent, type QuotaEvent } from '../core/events.js';
import { canonicalJson } from './audit-hash.js';
import { eventId } from './event-id.js';
import { corrupt } from './rows.js';

/*
 * Event rows, shared by both adapters (docs/design/rules.md#e1, #e8): what an append stores and how
 * a stored row reads back. PostgreSQL hands `data_json` back parsed (JSONB), SQLite as text.
 */

/** Columns of a `quota_events` row as both adapters read them. */
export interface EventRow {
  readonly seq: number | string;
  readonly id: string;
  readonly event_key: string;
  readonly tenant: string;
  readonly type: string;
  readonly at_ms: number | string;
  readonly data_json: unknown;
}

/** The `tenant` column of an event of the plane as a whole. */
const PLANE_EVENT_TENANT = '';

/**
 * The columns an append stores for an event: its id derived from its key, its tenant ('' for the
 * plane's), its data as canonical JSON text.
 */
export interface EventColumns {
  readonly id: string;
  readonly event_key: string;
  readonly tenant: string;
  readonly type: EventType;
  readonly at_ms: number;
  readonly data_json: string;
}

function keyColumns(event: NewEvent): Omit<EventColumns, 'data_json'> {
  return { id: eventId(event.key), event_key: event.key, tenant: event.tenant ?? PLANE_EVENT_TENANT, type: event.type, at_ms: event.atMs };
}

/** The {@link EventColumns} of `event`. */
export function eventColumns(event: NewEvent): EventColumns {
  return { ...keyColumns(event), data_json: canonicalJson(event.data) };
}

/**
 * The {@link EventColumns} of `event` as a JSONB column takes them in a JSON document: `data_json`
 * the data itself (JSONB keeps its own key order, so no canonical text is made to be parsed again).
 */
export function eventJsonColumns(event: NewEvent): Omit<EventColumns, 'data_json'> & { readonly data_json: unknown } {
  return { ...keyColumns(event), data_json: event.data };
}

/** A stored event. A row that does not read (unknown type, data that is not a JSON object, an id its key does not give) throws `STORE_CORRUPT`. */
export function decodeEvent(row: EventRow): QuotaEvent {
  const seq = Number(row.seq);
  let data: unknown = row.data_json;
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data);
    } catch {
      data = undefined;
    }
  }
  if (
    !EVENT_TYPES.includes(row.type as EventType) ||
    typeof data !== 'object' || data === null || Array.isArray(data) ||
    eventId(row.event_key) !== row.id
  ) {
    throw corrupt(row.tenant === PLANE_EVENT_TENANT ? 'quotaplane:plane' : row.tenant, `event ${seq} that cannot be read`, { seq });
  }
  return { seq, id: row.id, key: row.event_key, type: row.type as EventType, tenant: row.tenant === PLANE_EVENT_TENANT ? null : row.tenant, atMs: Number(row.at_ms), data: data as Record<string, unknown> };
}
