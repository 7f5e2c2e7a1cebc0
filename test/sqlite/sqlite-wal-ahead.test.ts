import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createPlane } from '../../src/plane/create-plane.js';
import { openStore } from '../../src/store/open-store.js';
import { BACKSTOP_WAL_AUTOCHECKPOINT_PAGES } from '../../src/store/sqlite/sqlite-checkpointer.js';
import { WAL_AHEAD_MAX_BYTES_PER_EXTENSION, WAL_AHEAD_MIN_FRAMES, WalAhead } from '../../src/store/sqlite/sqlite-wal-ahead.js';
import { extendUnderLock, walWriter } from './wal-test-support.js';

// The WAL written ahead of its frames: zeros past the end of the WAL file, written by the writer
// under its own write lock, so a fresh file's first lap of commits overwrites instead of growing.

// A WAL file of `frames` frames of `pageBytes` pages: its 32-byte header, then 24 bytes and a page each.
const walBytes = (frames: number, pageBytes: number): number => 32 + frames * (24 + pageBytes);

// The frames the WAL of the writer at `path` holds now, from a PASSIVE checkpoint of another connection.
function logFrames(path: string): number {
  const other = new Database(path);
  try {
    return (other.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]?.log ?? 0;
  } finally {
    other.close();
  }
}

describe('SQLite WAL written ahead', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-wal-ahead-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // A WalAhead on a fresh writer of `rows` committed rows at <dir>/store.db, closed after `check`.
  function withAhead(rows: number, limitFrames: number, check: (path: string, writer: Database.Database, ahead: WalAhead, insert: (from: number, count: number) => void) => void): void {
    const path = join(dir, 'store.db');
    const { writer, insert } = walWriter(path, rows);
    const ahead = new WalAhead(writer, limitFrames);
    try {
      check(path, writer, ahead, insert);
    } finally {
      ahead.close();
      writer.close();
    }
  }

  it('writes zeros past the end of the WAL file, and later commits overwrite them instead of growing it; recovery takes the zeros for no frame', () => {
    withAhead(50, BACKSTOP_WAL_AUTOCHECKPOINT_PAGES, (path, writer, ahead, insert) => {
      const pageBytes = writer.pragma('page_size', { simple: true }) as number;
      const before = readFileSync(`${path}-wal`);
      const frames = logFrames(path);
      extendUnderLock(writer, ahead, frames);
      const extended = readFileSync(`${path}-wal`);
      // Ahead by as many frames as the WAL holds, at least WAL_AHEAD_MIN_FRAMES (under one extension's cap here).
      const wanted = walBytes(frames + Math.max(frames, WAL_AHEAD_MIN_FRAMES), pageBytes);
      expect(wanted - before.length).toBeLessThan(WAL_AHEAD_MAX_BYTES_PER_EXTENSION);
      expect(extended.length).toBe(wanted);
      expect(ahead.extendedBytes).toBe(extended.length - before.length);
      // Every frame stays as it was; only zeros follow.
      expect(extended.subarray(0, before.length).equals(before)).toBe(true);
      expect(extended.subarray(before.length).every((byte) => byte === 0)).toBe(true);

      // 200 more commits write more frames than the file held before the extension, and they fit.
      insert(51, 200);
      expect(logFrames(path)).toBeGreaterThan((before.length - 32) / (24 + pageBytes));
      expect(statSync(`${path}-wal`).size).toBe(extended.length);
      // The file and its WAL as a crash would leave them (the writer is idle): recovery finds every
      // committed row and stops at the zeros after the last frame.
      const crashed = join(dir, 'crashed');
      mkdirSync(crashed);
      copyFileSync(path, join(crashed, 'store.db'));
      copyFileSync(`${path}-wal`, join(crashed, 'store.db-wal'));
      const recovered = new Database(join(crashed, 'store.db'));
      try {
        expect(recovered.prepare('SELECT count(*) AS n, max(n) AS last FROM item').get()).toEqual({ n: 250, last: 250 });
        expect(recovered.pragma('integrity_check', { simple: true })).toBe('ok');
      } finally {
        recovered.close();
      }
    });
  });

  it('never writes past the limit, and a WAL already that long is left as it is', () => {
    const limitFrames = 40;
    withAhead(10, limitFrames, (path, writer, ahead) => {
      const pageBytes = writer.pragma('page_size', { simple: true }) as number;
      extendUnderLock(writer, ahead, logFrames(path));
      expect(statSync(`${path}-wal`).size).toBe(walBytes(limitFrames, pageBytes));
      const written = ahead.extendedBytes;
      extendUnderLock(writer, ahead, limitFrames * 10);
      expect({ size: statSync(`${path}-wal`).size, written: ahead.extendedBytes }).toEqual({ size: walBytes(limitFrames, pageBytes), written });
    });
  });

  it('writes at most WAL_AHEAD_MAX_BYTES_PER_EXTENSION a call, and goes on from there at the next', () => {
    withAhead(10, BACKSTOP_WAL_AUTOCHECKPOINT_PAGES, (path, writer, ahead) => {
      const start = statSync(`${path}-wal`).size;
      // 3,000 frames held would want 6,000: more than one call may write.
      extendUnderLock(writer, ahead, 3_000);
      expect(statSync(`${path}-wal`).size).toBe(start + WAL_AHEAD_MAX_BYTES_PER_EXTENSION);
      extendUnderLock(writer, ahead, 3_000);
      expect(statSync(`${path}-wal`).size).toBe(start + 2 * WAL_AHEAD_MAX_BYTES_PER_EXTENSION);
      expect(ahead.extendedBytes).toBe(2 * WAL_AHEAD_MAX_BYTES_PER_EXTENSION);
    });
  });

  it('writes nothing after close, and on a database without a file neither throws nor writes', () => {
    withAhead(10, BACKSTOP_WAL_AUTOCHECKPOINT_PAGES, (path, writer, ahead) => {
      const size = statSync(`${path}-wal`).size;
      ahead.close();
      extendUnderLock(writer, ahead, 100);
      expect({ size: statSync(`${path}-wal`).size, written: ahead.extendedBytes }).toEqual({ size, written: 0 });
    });
    const memory = new Database(':memory:');
    const inMemory = new WalAhead(memory, BACKSTOP_WAL_AUTOCHECKPOINT_PAGES);
    try {
      expect(() => inMemory.extend(100)).not.toThrow();
      expect(inMemory.extendedBytes).toBe(0);
    } finally {
      inMemory.close();
      memory.close();
    }
  });

  it('keeps writing into the WAL of the file it opened after a symbolic link in its path points elsewhere', () => {
    // A store opened as <dir>/current/store.db, where current -> a; then current is pointed at b,
    // whose own database is being written. The zeros must still go to a's WAL, never into b's.
    mkdirSync(join(dir, 'a'));
    mkdirSync(join(dir, 'b'));
    symlinkSync(join(dir, 'a'), join(dir, 'current'));
    const { writer } = walWriter(join(dir, 'current', 'store.db'), 10);
    const other = walWriter(join(dir, 'b', 'store.db'), 10);
    const ahead = new WalAhead(writer, BACKSTOP_WAL_AUTOCHECKPOINT_PAGES);
    try {
      extendUnderLock(writer, ahead, 0);
      unlinkSync(join(dir, 'current'));
      symlinkSync(join(dir, 'b'), join(dir, 'current'));
      const otherWal = readFileSync(join(dir, 'b', 'store.db-wal'));
      const ownBefore = statSync(join(dir, 'a', 'store.db-wal')).size;
      extendUnderLock(writer, ahead, 2_000);
      expect(readFileSync(join(dir, 'b', 'store.db-wal')).equals(otherWal)).toBe(true);
      expect(statSync(join(dir, 'a', 'store.db-wal')).size).toBeGreaterThan(ownBefore);
    } finally {
      ahead.close();
      other.writer.close();
      writer.close();
    }
  });

  it('a store on a file writes its WAL ahead from its second batch on, and reopens with every decision', async () => {
    const path = join(dir, 'store.db');
    const store = await openStore(`sqlite:${path}`);
    const plane = createPlane({ store });
    await plane.setQuota('acme', { period: 'daily', maxConcurrentRuns: 4, maxTokensPerPeriod: 1_000_000 }, { newTenant: true });
    const budget = { maxTokens: 100, maxCallTokens: 0 };
    try {
      for (let n = 0; n < 5; n += 1) {
        const pass = await plane.admit({ tenant: 'acme', budget, width: 1 });
        if (!pass.ok) throw new Error(pass.message);
        await plane.settle({ tenant: 'acme', run: pass.run, epoch: pass.epoch, spend: { tokens: 10, minorUnits: 0 }, concludes: true });
      }
      // Eleven commits write about a hundred frames; the file holds at least WAL_AHEAD_MIN_FRAMES.
      expect(statSync(`${path}-wal`).size).toBeGreaterThanOrEqual(walBytes(WAL_AHEAD_MIN_FRAMES, 1024));
    } finally {
      await store.close();
    }
    const reopened = await openStore(`sqlite:${path}`);
    try {
      expect(await createPlane({ store: reopened }).usage({ tenant: 'acme' })).toMatchObject({ running: 0, spent: { tokens: 50 } });
    } finally {
      await reopened.close();
    }
  });
});
