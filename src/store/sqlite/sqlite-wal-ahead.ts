import { closeSync, fdatasync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';

import type Database from 'better-sqlite3';

/** Bytes of the WAL file's header (SQLite's WAL file format). */
export const WAL_HEADER_BYTES = 32;
/** Bytes of each WAL frame's header, before its page (SQLite's WAL file format). */
export const WAL_FRAME_HEADER_BYTES = 24;

/** Bytes of one WAL frame of `db`: its header and one page. */
export function walFrameBytes(db: Database.Database): number {
  return (db.pragma('page_size', { simple: true }) as number) + WAL_FRAME_HEADER_BYTES;
}

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
 * file already has instead of growing it. A commit that grows the file must also write
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
 * Once it stops (a fault of its own, such as a full disk, or {@link stop} from the writer), the
 * next {@link extend} gives back the zeros no frame has reached yet: it truncates the file after its
 * last frame. Kept, they would hold disk space nothing uses while the disk is full, and a store
 * whose WAL took the last free bytes could then never checkpoint (a checkpoint may grow the database
 * file, and a commit may need to grow the `-shm` file), so it would stay refused however long it
 * waited, and even a reopen would fail.
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
  // Stops for good after a fault (a full disk, say) or stop(): the WAL then grows as SQLite grows it.
  #stopped = false;
  #extendedBytes = 0;
  // The lowest offset zeros were written from: giving back never cuts below it.
  #aheadFrom: number | null = null;
  #givenBack = false;
  #givenBackBytes = 0;

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
   * comment). Never throws: a fault stops the extension for good and gives back the zeros past
   * the last frame (see the class comment); so does the first call after {@link stop}.
   */
  extend(logFrames: number): void {
    if (this.#closed) return;
    if (this.#stopped) {
      this.#giveBack();
      return;
    }
    try {
      const fd = this.#fd ?? this.#open();
      const wantedBytes = WAL_HEADER_BYTES + Math.min(this.#limitFrames, logFrames + Math.max(logFrames, WAL_AHEAD_MIN_FRAMES)) * this.#frameBytes;
      if (wantedBytes <= this.#knownBytes) return;
      let end = fstatSync(fd).size;
      const stop = Math.min(wantedBytes, end + WAL_AHEAD_MAX_BYTES_PER_EXTENSION);
      if (end < stop && (this.#aheadFrom === null || end < this.#aheadFrom)) this.#aheadFrom = end;
      while (end < stop) {
        const written = writeSync(fd, ZEROS, 0, Math.min(ZEROS.length, stop - end), end);
        end += written;
        this.#extendedBytes += written;
      }
      this.#knownBytes = end;
      this.#sync(fd);
    } catch {
      this.#stopped = true;
      this.#giveBack();
    }
  }

  /**
   * Stops for good: the writer no longer needs frames ahead (its disk is full, or it checkpoints on
   * its own again). The zeros are given back by the next {@link extend}, which runs under the write lock.
   */
  stop(): void {
    this.#stopped = true;
  }

  /** True once it stopped for good, after a fault or {@link stop}. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Bytes of zeros given back (truncated off the WAL file) after it stopped. */
  get givenBackBytes(): number {
    return this.#givenBackBytes;
  }

  // Under the write lock, before the transaction writes. Walks back from the end of the file, a
  // frame's slot at a time, while the slot's frame header is all zeros: no frame is there (a frame's
  // header starts with its page number, never 0, and SQLite writes frames one after another from
  // the start of the file, so none lies past a slot it never reached). The file is cut after the
  // last slot that holds anything, never below the offset the zeros started from, which keeps every
  // frame, committed or not, of this lap or an earlier one. Once only; a fault leaves the file as it is.
  #giveBack(): void {
    if (this.#givenBack) return;
    this.#givenBack = true;
    const fd = this.#fd;
    const from = this.#aheadFrom;
    try {
      if (fd === null || from === null || this.#frameBytes === 0) return;
      const size = fstatSync(fd).size;
      const lowest = Math.max(0, Math.ceil((from - WAL_HEADER_BYTES) / this.#frameBytes));
      const header = Buffer.alloc(WAL_FRAME_HEADER_BYTES);
      let slot = Math.ceil((size - WAL_HEADER_BYTES) / this.#frameBytes);
      while (slot > lowest) {
        header.fill(0);
        readSync(fd, header, 0, WAL_FRAME_HEADER_BYTES, WAL_HEADER_BYTES + (slot - 1) * this.#frameBytes);
        if (header.some((byte) => byte !== 0)) break;
        slot -= 1;
      }
      const cut = WAL_HEADER_BYTES + slot * this.#frameBytes;
      if (cut < size) {
        ftruncateSync(fd, cut);
        this.#givenBackBytes += size - cut;
      }
      this.#knownBytes = 0;
    } catch {
      // The zeros stay; SQLite takes them for no frame either way.
    } finally {
      this.close();
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
    this.#frameBytes = walFrameBytes(this.#db);
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
