import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { WalCheckpointer } from '../../src/store/sqlite/sqlite-checkpointer.js';
import { until } from '../until.js';

// Background checkpoints: the copy of committed WAL pages into the database file runs on a
// worker thread with its own connection, not inside a writer's COMMIT on the event loop.

// The rows of `table` in the database file alone, as a copy without its WAL sees them: only what a
// checkpoint has copied there.
function rowsInFileAlone(dir: string, path: string, table: string): number {
  const copy = join(dir, 'file-alone.db');
  rmSync(copy, { force: true });
  copyFileSync(path, copy);
  const reader = new Database(copy, { readonly: true });
  try {
    // Before the first checkpoint even the table may not be in the file yet.
    const exists = reader.prepare("SELECT 1 FROM sqlite_schema WHERE name = ?").get(table) !== undefined;
    return exists || table === 'sqlite_schema' ? (reader.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n : 0;
  } catch (error) {
    // A copy taken while a checkpoint writes the file can be torn: no count yet, look again.
    if ((error as { code?: unknown }).code === 'SQLITE_CORRUPT') return -1;
    throw error;
  } finally {
    reader.close();
  }
}

describe('SQLite background checkpoints', () => {
  let dir: string;
  let path: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-checkpointer-'));
    path = join(dir, 'store.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('after a nudge the thread copies every committed WAL frame into the database file', async () => {
    const writer = new Database(path);
    writer.pragma('journal_mode = WAL');
    writer.pragma('wal_autocheckpoint = 0');
    writer.exec('CREATE TABLE item (n INTEGER PRIMARY KEY)');
    const insert = writer.prepare('INSERT INTO item (n) VALUES (?)');
    for (let n = 1; n <= 50; n += 1) insert.run(n);
    expect(rowsInFileAlone(dir, path, 'sqlite_schema')).toBe(0);

    const failures: Error[] = [];
    const checkpointer = new WalCheckpointer(path, (fault) => failures.push(fault));
    try {
      checkpointer.nudge();
      await until(() => checkpointer.stats.checkpoints >= 1, 'the thread ran a checkpoint');
      const stats = checkpointer.stats;
      expect(stats.lastLogFrames).toBeGreaterThan(0);
      expect(stats.lastCheckpointedFrames).toBe(stats.lastLogFrames);
      expect(stats.failed).toBe(false);
      expect(rowsInFileAlone(dir, path, 'item')).toBe(50);
      expect(failures).toEqual([]);
    } finally {
      await checkpointer.close();
      writer.close();
    }
  });

  it('a checkpointer that cannot open its file reports the fault once, and then ignores nudges and closes', async () => {
    const failures: Error[] = [];
    const checkpointer = new WalCheckpointer(join(dir, 'missing', 'store.db'), (fault) => failures.push(fault));
    await until(() => checkpointer.stats.failed, 'the thread reported its fault');
    checkpointer.nudge();
    await checkpointer.close();
    expect(failures).toHaveLength(1);
    expect(checkpointer.stats.checkpoints).toBe(0);
  });

  it('a store on a file checkpoints its commits in the background, far below SQLite\'s own threshold', async () => {
    const store = await openStore(`sqlite:${path}`);
    const plane = createPlane({ store });
    await plane.setQuota('acme', { period: 'daily', maxConcurrentRuns: 4, maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
    const budget = { maxTokens: 100, maxCallTokens: 0 };
    // A few dozen decisions write far fewer WAL pages than SQLite's automatic checkpoint (1,000).
    for (let n = 0; n < 20; n += 1) {
      const pass = await plane.admit({ tenant: 'acme', budget, width: 1 });
      if (!pass.ok) throw new Error(pass.message);
      await plane.settle({ tenant: 'acme', run: pass.run, epoch: pass.epoch, spend: { tokens: 10, minorUnits: 0 }, concludes: true });
    }
    try {
      await until(() => rowsInFileAlone(dir, path, 'quota_runs') === 20, 'the 20 runs reached the database file');
    } finally {
      await store.close();
    }
    // The thread's connection closed first, so the store's was the last and removed the WAL.
    expect(existsSync(`${path}-wal`)).toBe(false);
  });

  it('a process whose last work is closing the store finishes the close and exits 0', () => {
    // The thread is unreferenced while it runs; awaiting its end in close() must still keep the
    // process alive, or Node ends it with exit code 13 before the close resolves.
    const script = join(dir, 'close-last.mts');
    const storeModule = resolve('src/store/open-store.ts');
    const planeModule = resolve('src/plane/create-plane.ts');
    writeFileSync(
      script,
      `import { openStore } from ${JSON.stringify(storeModule)};
import { createPlane } from ${JSON.stringify(planeModule)};
const store = await openStore(${JSON.stringify(`sqlite:${path}`)});
await createPlane({ store }).setQuota('acme', { period: 'daily', maxConcurrentRuns: 1 }, { newTenant: true });
await store.close();
process.stdout.write('closed');
`,
    );
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 60_000 });
    expect({ status: child.status, stdout: child.stdout }).toEqual({ status: 0, stdout: 'closed' });
    expect(existsSync(`${path}-wal`)).toBe(false);
  });
});
