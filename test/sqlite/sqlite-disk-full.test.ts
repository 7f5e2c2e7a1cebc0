import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { BACKSTOP_WAL_AUTOCHECKPOINT_PAGES, SQLITE_DEFAULT_WAL_AUTOCHECKPOINT_PAGES } from '../../src/store/sqlite/sqlite-checkpointer.js';
import { SqliteConnection } from '../../src/store/sqlite/sqlite-connection.js';
import { toQuotaError } from '../../src/store/sqlite/sqlite-errors.js';
import { WAL_AHEAD_MIN_FRAMES, WAL_FRAME_HEADER_BYTES, WAL_HEADER_BYTES, WalAhead } from '../../src/store/sqlite/sqlite-wal-ahead.js';
import { until } from '../until.js';
import { extendUnderLock, walWriter } from './wal-test-support.js';

// A full disk under the WAL written ahead. A real full disk needs a small file system of
// its own (a tmpfs or a loop device), which takes privileges a test cannot count on, so the disk is
// filled here at the narrowest seam the code has: the `writeSync` the WAL-ahead writes its zeros
// with, which answers ENOSPC once `disk.freeBytes` are used up, as a write on a full file system does.
// Without the give-back, a store on a small volume filled it with its own WAL (zeros ahead of the
// frames, then frames up to the 20 MB backstop), and could never checkpoint again: a checkpoint
// grows the database file, and there was no byte left for it. Every write stayed refused, and
// the file could not even be reopened (SQLITE_IOERR_SHMSIZE).
const disk = vi.hoisted(() => ({ freeBytes: Number.POSITIVE_INFINITY }));
vi.mock('node:fs', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs')>();
  const writeSync = ((fd: number, buffer: NodeJS.ArrayBufferView, offset?: number, length?: number, position?: number | null): number => {
    const wanted = length ?? buffer.byteLength;
    if (disk.freeBytes <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
    const written = original.writeSync(fd, buffer, offset, Math.min(wanted, disk.freeBytes), position);
    disk.freeBytes -= written;
    return written;
  }) as typeof original.writeSync;
  return { ...original, default: { ...original, writeSync }, writeSync };
});

describe('SQLite WAL written ahead, when the disk fills', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-disk-full-'));
    disk.freeBytes = Number.POSITIVE_INFINITY;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  // The end of the last frame in a WAL file: the slot after the last whose frame header is not all zeros.
  function framesEnd(wal: Buffer, pageBytes: number): number {
    const frameBytes = WAL_FRAME_HEADER_BYTES + pageBytes;
    let slots = Math.floor((wal.length - WAL_HEADER_BYTES) / frameBytes);
    while (slots > 0 && wal.subarray(WAL_HEADER_BYTES + (slots - 1) * frameBytes, WAL_HEADER_BYTES + (slots - 1) * frameBytes + WAL_FRAME_HEADER_BYTES).every((byte) => byte === 0)) slots -= 1;
    return WAL_HEADER_BYTES + slots * frameBytes;
  }

  // Copies the file and its WAL as a crash would leave them, and answers what recovery reads.
  function recover(path: string): unknown {
    const crashed = join(dir, `crashed-${Math.random().toString(36).slice(2)}`);
    mkdirSync(crashed);
    copyFileSync(path, join(crashed, 'store.db'));
    copyFileSync(`${path}-wal`, join(crashed, 'store.db-wal'));
    const recovered = new Database(join(crashed, 'store.db'));
    try {
      return { ...(recovered.prepare('SELECT count(*) AS n, max(n) AS last FROM item').get() as object), integrity: recovered.pragma('integrity_check', { simple: true }) };
    } finally {
      recovered.close();
    }
  }

  it('a write that finds the disk full gives back every zero written past the last frame, and stops for good', () => {
    const path = join(dir, 'store.db');
    const { writer, insert } = walWriter(path, 40);
    const ahead = new WalAhead(writer, BACKSTOP_WAL_AUTOCHECKPOINT_PAGES);
    try {
      const pageBytes = writer.pragma('page_size', { simple: true }) as number;
      const before = statSync(`${path}-wal`).size;
      extendUnderLock(writer, ahead, 0);
      const extended = statSync(`${path}-wal`).size;
      expect(extended).toBe(WAL_HEADER_BYTES + WAL_AHEAD_MIN_FRAMES * (WAL_FRAME_HEADER_BYTES + pageBytes));
      // Commits overwrite some of the zeros; then the next extension finds the disk full part-way.
      insert(41, 60);
      disk.freeBytes = 100_000;
      extendUnderLock(writer, ahead, 700);
      const wal = readFileSync(`${path}-wal`);
      // Cut right after the last frame: the zeros of both extensions are gone, every frame stays.
      expect(wal.length).toBe(framesEnd(wal, pageBytes));
      expect(wal.length).toBeGreaterThan(before);
      expect(wal.length).toBeLessThan(extended);
      expect(ahead.stopped).toBe(true);
      expect(ahead.givenBackBytes).toBeGreaterThan(100_000);
      expect(recover(path)).toEqual({ n: 100, last: 100, integrity: 'ok' });
      // Stopped for good: the disk has room again, and nothing more is written ahead.
      disk.freeBytes = Number.POSITIVE_INFINITY;
      const written = ahead.extendedBytes;
      extendUnderLock(writer, ahead, 700);
      expect(ahead.extendedBytes).toBe(written);
      insert(101, 10);
      expect(recover(path)).toEqual({ n: 110, last: 110, integrity: 'ok' });
    } finally {
      ahead.close();
      writer.close();
    }
  });

  it('after stop(), the next call under the write lock gives the zeros back, keeping every frame', () => {
    const path = join(dir, 'store.db');
    const { writer, insert } = walWriter(path, 40);
    const ahead = new WalAhead(writer, BACKSTOP_WAL_AUTOCHECKPOINT_PAGES);
    try {
      const pageBytes = writer.pragma('page_size', { simple: true }) as number;
      extendUnderLock(writer, ahead, 0);
      insert(41, 20);
      const extended = statSync(`${path}-wal`).size;
      ahead.stop();
      // Nothing is cut outside the write lock.
      expect(statSync(`${path}-wal`).size).toBe(extended);
      extendUnderLock(writer, ahead, 0);
      const wal = readFileSync(`${path}-wal`);
      expect(wal.length).toBe(framesEnd(wal, pageBytes));
      expect(ahead.givenBackBytes).toBe(extended - wal.length);
      expect(ahead.givenBackBytes).toBeGreaterThan(0);
      expect(recover(path)).toEqual({ n: 60, last: 60, integrity: 'ok' });
    } finally {
      ahead.close();
      writer.close();
    }
  });

  it('a store connection whose batch meets a full disk goes back to SQLite\'s own checkpoints and gives back the WAL\'s zeros', async () => {
    const path = join(dir, 'store.db');
    const db = new Database(path);
    db.pragma('page_size = 1024');
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE item (n INTEGER PRIMARY KEY, pad TEXT)');
    const conn = new SqliteConnection(db, { busyTimeoutMs: 1000, walDatabasePath: path });
    try {
      const insert = (n: number): Promise<void> => conn.write(() => void conn.run('INSERT INTO item (n, pad) VALUES (:n, :pad)', { n, pad: 'x'.repeat(200) }));
      // The first commit starts the checkpoint thread and the WAL-ahead; the second batch writes ahead.
      await insert(1);
      await insert(2);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_WAL_AUTOCHECKPOINT_PAGES);
      const ahead = statSync(`${path}-wal`).size;
      expect(ahead).toBeGreaterThanOrEqual(WAL_HEADER_BYTES + WAL_AHEAD_MIN_FRAMES * (WAL_FRAME_HEADER_BYTES + 1024));
      // SQLite's own SQLITE_FULL, from a page limit the next insert passes (the disk seen as full).
      const pages = db.pragma('page_count', { simple: true }) as number;
      db.pragma(`max_page_count = ${pages}`);
      const refused = await conn.write(() => {
        for (let n = 100; n < 200; n += 1) conn.run('INSERT INTO item (n, pad) VALUES (:n, :pad)', { n, pad: 'x'.repeat(200) });
      }).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(QuotaError);
      expect((refused as QuotaError).code).toBe('STORE_UNAVAILABLE');
      expect((refused as QuotaError).details).toMatchObject({ code: 'SQLITE_FULL' });
      expect((refused as QuotaError).message).toMatch(/disk holding its file is full, so nothing was decided; free space on that disk and retry/);
      expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(SQLITE_DEFAULT_WAL_AUTOCHECKPOINT_PAGES);
      // Room again: the next batch cuts the zeros off under its write lock, and commits.
      db.pragma('max_page_count = 1073741823');
      await insert(3);
      const wal = readFileSync(`${path}-wal`);
      expect(wal.length).toBeLessThan(ahead);
      expect(wal.length).toBe(framesEnd(wal, 1024));
      expect(await conn.read(() => conn.all<{ n: number }>('SELECT n FROM item ORDER BY n', {}))).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    } finally {
      await conn.close();
    }
  });

  it('after a full disk, a WAL file that grew large is cut back to a few of SQLite\'s thresholds once its log starts over', async () => {
    const path = join(dir, 'store.db');
    const db = new Database(path);
    db.pragma('page_size = 1024');
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE item (n INTEGER PRIMARY KEY, pad TEXT)');
    const conn = new SqliteConnection(db, { busyTimeoutMs: 1000, walDatabasePath: path });
    const insert = (from: number, count: number): Promise<void> =>
      conn.write(() => {
        for (let n = from; n < from + count; n += 1) conn.run('INSERT INTO item (n, pad) VALUES (:n, :pad)', { n, pad: 'x'.repeat(900) });
      });
    try {
      await insert(1, 1);
      // One transaction of about 8,000 pages: the WAL file grows to about 8 MB, under the backstop.
      await insert(2, 8_000);
      const grown = statSync(`${path}-wal`).size;
      expect(grown).toBeGreaterThan(8_000_000);
      db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
      const refused = await insert(100_000, 100).then(
        () => null,
        (error: unknown) => error,
      );
      expect((refused as QuotaError).details).toMatchObject({ code: 'SQLITE_FULL' });
      db.pragma('max_page_count = 1073741823');
      // Commits go on. Once a checkpoint has copied the whole log back (SQLite's own after a commit,
      // the WAL being past its threshold, or the background thread's, which a loaded machine may
      // run later), the next commit starts the log over and cuts the file to the limit.
      const limit = 2 * SQLITE_DEFAULT_WAL_AUTOCHECKPOINT_PAGES * (WAL_FRAME_HEADER_BYTES + 1024);
      let next = 20_000;
      await until(async () => {
        await insert(next, 1);
        next += 1;
        return statSync(`${path}-wal`).size <= limit;
      }, 'the WAL file is cut back to its size limit');
      expect(db.pragma('journal_size_limit', { simple: true })).toBe(limit);
      expect(await conn.read(() => conn.get<{ n: number }>('SELECT count(*) AS n FROM item', {}))).toEqual({ n: 8_001 + (next - 20_000) });
    } finally {
      await conn.close();
    }
  });

  it('an I/O error names the disk and the usual cause: opening a store on a full disk fails growing its -shm file', () => {
    // What better-sqlite3 threw when a cleanly closed store was opened on a full tmpfs.
    const fault = toQuotaError(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_SHMSIZE' }));
    expect(fault.code).toBe('STORE_UNAVAILABLE');
    expect(fault.message).toBe(
      'the SQLite quota store could not answer (SQLITE_IOERR_SHMSIZE: disk I/O error); reading or writing its files failed, so nothing was decided; check the disk holding its file (a full disk is the usual cause, a failing one the other) and retry',
    );
    // A lock held elsewhere keeps the plain advice: waiting is the cure.
    expect(toQuotaError(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' })).message).toMatch(/nothing was decided, retry later$/);
  });
});

// An ext4 file system on a loop device whose backing file sat on a full tmpfs gave SQLITE_IOERR_FSYNC at
// COMMIT: every frame of the transaction, commit mark included, was in the WAL file, and only its
// sync failed. The batch was answered STORE_UNAVAILABLE, "nothing was decided", yet once the store
// was closed and opened again, recovery replayed those frames: the admissions and the settle of that
// batch were on the books. Such a COMMIT is simulated here at the connection's own seam, the driver
// handle it is given: its COMMIT statement commits, then throws what the driver threw.
describe('SQLite COMMIT that fails with an I/O error', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'quotaplane-commit-ioerr-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('answers STORE_UNAVAILABLE with an unknown outcome, never "nothing was decided": recovery may replay the transaction', async () => {
    const path = join(dir, 'store.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE item (n INTEGER PRIMARY KEY)');
    const fail = { next: false };
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const statement = prepare(sql);
      if (sql !== 'COMMIT') return statement;
      const run = statement.run.bind(statement);
      return Object.assign(Object.create(statement) as Database.Statement, {
        run: (...params: unknown[]) => {
          const result = run(...params);
          if (fail.next) {
            fail.next = false;
            throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_FSYNC' });
          }
          return result;
        },
      });
    }) as typeof db.prepare;
    const conn = new SqliteConnection(db, { busyTimeoutMs: 1000 });
    try {
      fail.next = true;
      const refused = await conn.write(() => conn.run('INSERT INTO item (n) VALUES (:n)', { n: 1 })).then(
        () => null,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(QuotaError);
      const fault = refused as QuotaError;
      expect(fault.code).toBe('STORE_UNAVAILABLE');
      expect(fault.details).toMatchObject({ backend: 'sqlite', step: 'commit', code: 'SQLITE_IOERR_FSYNC', outcome: 'unknown' });
      expect(fault.message).not.toMatch(/nothing was decided/);
      expect(fault.message).toMatch(/not acknowledged, so do not act on it, but it may still be on the books/);
      expect(fault.message).toMatch(/retry the same call to learn its outcome/);
      // Why: the transaction is there.
      expect(await conn.read(() => conn.all('SELECT n FROM item', {}))).toEqual([{ n: 1 }]);
      // A later batch commits as usual.
      await conn.write(() => conn.run('INSERT INTO item (n) VALUES (:n)', { n: 2 }));
    } finally {
      await conn.close();
    }
  });
});
