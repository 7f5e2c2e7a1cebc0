import type { PostgresBatcher } from './postgres-batcher.js';
import type { PostgresConnection } from './postgres-connection.js';
import type { PostgresQueries } from './postgres-queries.js';

/** What every composite needs: the pool, the statements, the batcher, and the tenant it is confined to. */
export interface LifecycleContext {
  readonly db: PostgresConnection;
  readonly q: PostgresQueries;
  readonly batch: PostgresBatcher;
  readonly tenant: string;
}
