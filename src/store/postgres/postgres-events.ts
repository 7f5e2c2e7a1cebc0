import type { NewEvent, QuotaEvent } from '../../core/events.js';
import { decodeEvent, eventJsonColumns, type EventRow } from '../event-rows.js';
import type { TransactionClient } from './postgres-connection.js';
import type { PostgresQueries } from './postgres-queries.js';

/*
 * The event log on PostgreSQL (docs/design/rules.md#e1, #e8). Mirrors sqlite-events.ts. A batch's
 * decisions append theirs through `quota_books_write` (`events`); the statements here serve the
 * paths that run their own transaction (an audit row's event) and the reads.
 */

/** Anything that runs a statement and answers its rows: the connection or a transaction. */
type Rows = Pick<TransactionClient, 'rows'>;

/**
 * Appends `events` inside the caller's transaction, each unless its id is there already, under the
 * events lock (migration 0004 `quota_events_append`), which must be the last lock the transaction takes.
 */
export async function appendEventsInTransaction(tx: Rows, q: PostgresQueries, events: readonly NewEvent[]): Promise<void> {
  if (events.length > 0) await tx.rows(q.books.appendEvents, [JSON.stringify(events.map(eventJsonColumns))]);
}

/** Up to `limit` events after `afterSeq`, oldest first, of `tenant` only when given (port/events.ts `eventsAfter`). */
export async function readEventsAfter(db: Rows, q: PostgresQueries, afterSeq: number, limit: number, tenant: string | undefined): Promise<QuotaEvent[]> {
  const rows = tenant === undefined
    ? await db.rows<EventRow>(q.eventsAfter, [afterSeq, limit])
    : await db.rows<EventRow>(q.tenantEventsAfter, [afterSeq, limit, tenant]);
  return rows.map(decodeEvent);
}

/** The newest `limit` events, oldest first, of `tenant` only when given (port/events.ts `newestEvents`). */
export async function readNewestEvents(db: Rows, q: PostgresQueries, limit: number, tenant: string | undefined): Promise<QuotaEvent[]> {
  const rows = tenant === undefined ? await db.rows<EventRow>(q.newestEvents, [limit]) : await db.rows<EventRow>(q.tenantNewestEvents, [limit, tenant]);
  return rows.reverse().map(decodeEvent);
}
