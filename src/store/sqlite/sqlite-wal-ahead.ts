import { closeSync, fdatasync, fstatSync, openSync, writeSync } from 'node:fs';

import type Database from 'better-sqlite3';

/** Bytes of the WAL file's header, and of each frame's header before its page (SQLite's file format, §4.1). */
const WAL_HEADER_BYTES = 32;
const WAL_FRAME_HEADER_BYTES = 24;

/**
 * How far ahead of its frames the WAL file is kept written, in frames: at least this many, and at
 * least as many as the WAL held at the latest checkpoint.
 */
export const WAL_AHEAD_MIN_FRAMES = 512;

/** Most bytes of zeros written at once (while the writer holds the write lock, on the event loop). */
export const WAL_AHEAD_MAX_BYTES_PER_EXTENSION = 1024 * 1024;

const ZEROS = Buffer.alloc(64 * 1024);

/**
 * Keeps the WAL file of one database written ahead of its frames, so commits overwrite blocks the
 * file already has instead of growing it (issue 8). A commit that grows the file must also write
 * the file's new size and block map in its sync (on a journaling file system, a journal commit);
 * one that overwrites syncs only its data. SQLite reuses its WAL file once the log starts over, and never shrinks it
 * while no `journal_size_limit` is set, so only a file's first lap appends, and that lap is the
 * whole automatic-checkpoint threshold (about 20 MB at the store's settings).
 *
 * {@link extend} must be called only while this connection holds the write lock and has written
 * nothing in its transaction yet (right after `BEGIN IMMEDIATE`): then no frame can be written
 * meanwhile, by this process or another, and every frame lies before the file's end, so the zeros go
 * only where no frame is. SQLite takes them for no frame at all (a frame counts only with the WAL
 * header's salts and a valid checksum), in recovery too. They are synced on a libuv thread, not on
 * the event loop.
 *
 * The WAL is found from the path SQLite resolved when it opened the database (`PRAGMA
 * database_list`: absolute, symbolic links followed), once, and kept open, so a later change of
 * the working directory or of a symbolic link cannot point it at another database's WAL.
 */
export class WalAhead {
  readonly #db: Database.Database;
  readonly #limitFrames: number;
  #fd: number | null = null;
  #frameBytes = 0;
  // A size the file is known to have reached (a hint: the real size is read under the lock).
  #knownBytes = 0;
  #syncing = false;
  #closed = false;
  // Stops for good after a fault (a full disk, say): the WAL then grows as SQLite grows it.
  #stopped = false;
  #extendedBytes = 0;

  /** `db` is the writing connection of a WAL-mode file; the file is kept ahead by up to `limitFrames` frames (the automatic-checkpoint threshold). */
  constructor(db: Database.Database, limitFrames: number) {
    this.#db = db;
    this.#limitFrames = limitFrames;
  }

  /** Bytes of zeros written past the end of the WAL file so far. */
  get extendedBytes(): number {
    return this.#extendedBytes;
  }

  /**
   * Writes zeros past the end of the WAL file until it holds `logFrames` frames plus as many again
   * (at least {@link WAL_AHEAD_MIN_FRAMES}), capped at the limit, at most
   * {@link WAL_AHEAD_MAX_BYTES_PER_EXTENSION} bytes a call. `logFrames` is the WAL's length at the
   * latest checkpoint. Call only under the write lock, before the transaction writes (see the class
   * comment). Never throws: a fault stops the extension for good.
   */
  extend(logFrames: number): void {
    if (this.#stopped || this.#closed) return;
    try {
      const fd = this.#fd ?? this.#open();
      const wantedBytes = WAL_HEADER_BYTES + Math.min(this.#limitFrames, logFrames + Math.max(logFrames, WAL_AHEAD_MIN_FRAMES)) * this.#frameBytes;
      if (wantedBytes <= this.#knownBytes) return;
      let end = fstatSync(fd).size;
      const stop = Math.min(wantedBytes, end + WAL_AHEAD_MAX_BYTES_PER_EXTENSION);
      while (end < stop) {
        const written = writeSync(fd, ZEROS, 0, Math.min(ZEROS.length, stop - end), end);
        end += written;
        this.#extendedBytes += written;
      }
      this.#knownBytes = end;
      this.#sync(fd);
    } catch {
      this.#stopped = true;
    }
  }

  /** Closes the WAL file once its last sync has finished; idempotent. */
  close(): void {
    this.#closed = true;
    if (this.#fd !== null && !this.#syncing) {
      closeSync(this.#fd);
      this.#fd = null;
    }
  }

  #open(): number {
    const main = (this.#db.pragma('database_list') as { name: string; file: string }[]).find((each) => each.name === 'main');
    if (main === undefined || main.file === '') throw new Error('the database has no file');
    this.#frameBytes = (this.#db.pragma('page_size', { simple: true }) as number) + WAL_FRAME_HEADER_BYTES;
    this.#fd = openSync(`${main.file}-wal`, 'r+');
    return this.#fd;
  }

  // One sync at a time; the zeros written meanwhile are synced by the writer's next commit anyway.
  #sync(fd: number): void {
    if (this.#syncing) return;
    this.#syncing = true;
    fdatasync(fd, (fault) => {
      this.#syncing = false;
      if (fault !== null) this.#stopped = true;
      if (this.#closed) this.close();
    });
  }
}
