import type { QuotaEvent } from '../../core/events.js';

/**
 * The plane's event log, a capability of the whole store (docs/design/rules.md#e1–#e9). Events are
 * appended by the decisions that cause them, in their own transaction; this capability reads them.
 * Optional like `PlaneHaltStore`, so third-party stores keep compiling; both adapters have it.
 */
export interface EventLogStore {
  /**
   * Up to `limit` events with `seq` greater than `afterSeq` (0: from the start), oldest first, of
   * `tenant` only when given. An event that cannot be read as written throws `STORE_CORRUPT`.
   */
  eventsAfter?(afterSeq: number, limit: number, tenant?: string): Promise<readonly QuotaEvent[]>;
  /** The newest `limit` events, oldest first, of `tenant` only when given: the tail of the log, to follow from. */
  newestEvents?(limit: number, tenant?: string): Promise<readonly QuotaEvent[]>;
}
