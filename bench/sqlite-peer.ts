import Database from 'better-sqlite3';
import { RateLimiterSQLite } from 'rate-limiter-flexible';

import { DEFAULT_BUSY_TIMEOUT_MS } from '../src/store/sqlite/sqlite-store.js';

/**
 * The peer every SQLite figure is compared with: rate-limiter-flexible's `RateLimiterSQLite` on a
 * better-sqlite3 file with the pragmas `openStore` sets (WAL, synchronous=FULL, the same busy
 * timeout), so each `consume()` is one durable upsert transaction. Close `db` when done.
 */
export async function openRateLimiterPeer(path: string): Promise<{ db: Database.Database; limiter: RateLimiterSQLite }> {
  const db = new Database(path, { timeout: DEFAULT_BUSY_TIMEOUT_MS });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const limiter = await new Promise<RateLimiterSQLite>((resolve, reject) => {
    const created: RateLimiterSQLite = new RateLimiterSQLite(
      { storeClient: db, storeType: 'better-sqlite3', tableName: 'rlf_bench', points: 1_000_000_000, duration: 3600 },
      (error?: unknown) => (error === undefined || error === null ? resolve(created) : reject(error as Error)),
    );
  });
  return { db, limiter };
}
