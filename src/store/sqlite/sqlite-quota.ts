import type { TenantQuota } from '../../core/quota.js';
import type { SqliteConnection } from './sqlite-connection.js';
import { SELECT_QUOTA } from './sqlite-queries.js';
import { decodeQuota } from './sqlite-rows.js';

/**
 * The tenant's stored quota, or `null` when none was set; an unreadable one throws `STORE_CORRUPT`.
 * Inside a write it is read and decoded once while nothing writes it (`cachedInWrite`).
 */
export function readStoredQuota(conn: SqliteConnection, tenant: string): TenantQuota | null {
  return conn.cachedInWrite(`quota:${tenant}`, () => {
    const row = conn.get<{ quota_json: string }>(SELECT_QUOTA, { tenant });
    return row === undefined ? null : decodeQuota(tenant, row.quota_json);
  });
}
