import Database from 'better-sqlite3';

import type { WalAhead } from '../../src/store/sqlite/sqlite-wal-ahead.js';

/**
 * A writer in WAL mode that never checkpoints on its own, with `rows` committed rows, one a
 * commit, at the store's page size (1 KiB), so a few hundred frames ahead stay under one
 * extension's cap. `insert(from, count)` commits `count` more rows numbered from `from`.
 */
export function walWriter(path: string, rows = 50): { writer: Database.Database; insert: (from: number, count: number) => void } {
  const writer = new Database(path);
  writer.pragma('page_size = 1024');
  writer.pragma('journal_mode = WAL');
  writer.pragma('wal_autocheckpoint = 0');
  writer.exec('CREATE TABLE item (n INTEGER PRIMARY KEY, pad TEXT)');
  const statement = writer.prepare('INSERT INTO item (n, pad) VALUES (?, ?)');
  const insert = (from: number, count: number): void => {
    for (let n = from; n < from + count; n += 1) statement.run(n, 'x'.repeat(200));
  };
  insert(1, rows);
  return { writer, insert };
}

/** Extends the WAL as the store does: right after BEGIN IMMEDIATE, before the transaction writes. */
export function extendUnderLock(writer: Database.Database, ahead: WalAhead, frames: number): void {
  writer.exec('BEGIN IMMEDIATE');
  try {
    ahead.extend(frames);
  } finally {
    writer.exec('COMMIT');
  }
}
