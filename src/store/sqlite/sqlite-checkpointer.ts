import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL size in pages (about 20 MB at the 1 KiB pages of a store file; 80 MB in a file made with
 * 4 KiB pages) at which the writing connection checkpoints on its own while a
 * {@link WalCheckpointer} runs. SQLite starts the WAL over only once a checkpoint has copied
 * every frame in it; under writes that never pause, the background checkpoints stay a few commits
 * behind, and this backstop (cheap then: nearly every page is copied already) is the one that lets
 * the WAL start over. It also bounds the WAL when the thread falls behind.
 */
export const BACKSTOP_WAL_AUTOCHECKPOINT_PAGES = 20_000;

/** SQLite's own automatic checkpoint threshold, in WAL pages; the writer goes back to it when the checkpointer fails. */
export const SQLITE_DEFAULT_WAL_AUTOCHECKPOINT_PAGES = 1_000;

/**
 * How long the checkpointer waits after a commit before checkpointing, in ms: one checkpoint covers
 * every commit meanwhile, so at most about ten run a second whatever the load. A checkpoint copies
 * each distinct page once, so fewer, larger ones write less than SQLite's own (one per 1,000 WAL
 * pages: several a second under load). The WAL grows meanwhile: at 64 concurrent callers on
 * this project's bench machine, about 12 KiB a cycle at some 5,500 cycles a second, so about 7 MB
 * (7,000 pages) in 100 ms, under {@link BACKSTOP_WAL_AUTOCHECKPOINT_PAGES}.
 */
export const CHECKPOINT_COALESCE_MS = 100;

/** What the background checkpointer has done so far (for tests and diagnostics). */
export interface CheckpointerStats {
  /** Checkpoints run by the background thread. */
  readonly checkpoints: number;
  /** WAL frames the latest checkpoint found, and how many of them it copied into the database file. */
  readonly lastLogFrames: number;
  readonly lastCheckpointedFrames: number;
  /** Whether the thread stopped on a fault (the writer then checkpoints on its own, as SQLite does by default). */
  readonly failed: boolean;
}

// Slots of the shared counters: the pending flag (a nudge is outstanding), then the stats.
const PENDING = 0;
const CHECKPOINTS = 1;
const LAST_LOG = 2;
const LAST_CHECKPOINTED = 3;
const SLOTS = 4;

// The worker's program, run as CommonJS from a string so it needs no file of its own in the
// package (and runs the same from the TypeScript sources in tests and from dist/). It opens its own
// connection to the file and runs PASSIVE checkpoints: they take no write lock, so they never
// delay a writer, and they skip pages a reader still needs instead of waiting for it.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driverPath);
const counters = new Int32Array(workerData.counters);
const db = new Database(workerData.path, { fileMustExist: true, timeout: 0 });
db.pragma('busy_timeout = 0');
db.pragma('synchronous = FULL');
let timer = null;
function checkpoint() {
  timer = null;
  Atomics.store(counters, ${PENDING}, 0);
  const row = db.pragma('wal_checkpoint(PASSIVE)')[0];
  Atomics.add(counters, ${CHECKPOINTS}, 1);
  Atomics.store(counters, ${LAST_LOG}, row.log);
  Atomics.store(counters, ${LAST_CHECKPOINTED}, row.checkpointed);
}
parentPort.on('message', (message) => {
  if (message === 'close') {
    if (timer !== null) clearTimeout(timer);
    db.close();
    parentPort.close();
    return;
  }
  if (timer === null) timer = setTimeout(checkpoint, workerData.coalesceMs);
});
`;

/**
 * Runs the WAL checkpoints of one SQLite file on a worker thread with its own connection, so the
 * copy of committed pages into the database file (and its fsync) no longer happens inside a
 * writer's COMMIT on the event loop (there, a checkpoint ran in about one commit in four under 64
 * concurrent callers and took a quarter of the commit time).
 *
 * The writer calls {@link nudge} after each COMMIT; the thread checkpoints {@link CHECKPOINT_COALESCE_MS}
 * later, one checkpoint for every commit meanwhile. While it runs, the writing connection's
 * automatic checkpoint is raised to {@link BACKSTOP_WAL_AUTOCHECKPOINT_PAGES}; if the thread fails
 * (its connection cannot open, a checkpoint throws), `onFailure` is called once so the writer goes
 * back to SQLite's default. Durability is unchanged: a commit is durable once its WAL frames are
 * synced, whoever copies them later.
 */
export class WalCheckpointer {
  readonly #worker: Worker;
  readonly #counters: Int32Array;
  readonly #exited: Promise<void>;
  #failed = false;
  #closing = false;

  /** Starts the thread for the WAL-mode database file at `path` (not `:memory:`). */
  constructor(path: string, onFailure: (fault: Error) => void) {
    this.#counters = new Int32Array(new SharedArrayBuffer(SLOTS * Int32Array.BYTES_PER_ELEMENT));
    const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path, driverPath, counters: this.#counters.buffer, coalesceMs: CHECKPOINT_COALESCE_MS },
    });
    this.#exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    // The thread never keeps a process alive that has nothing else to do.
    this.#worker.unref();
    this.#worker.on('error', (fault) => {
      if (this.#failed) return;
      this.#failed = true;
      onFailure(fault);
    });
  }

  /** Tells the thread a commit added WAL frames; cheap, and a no-op while a checkpoint is already due. */
  nudge(): void {
    if (this.#failed || this.#closing) return;
    if (Atomics.compareExchange(this.#counters, PENDING, 0, 1) !== 0) return;
    this.#worker.postMessage('nudge');
  }

  /** WAL frames the latest checkpoint found (0 before the first); as `stats.lastLogFrames`, without building the object. */
  get lastLogFrames(): number {
    return Atomics.load(this.#counters, LAST_LOG);
  }

  /** What the thread has done so far. */
  get stats(): CheckpointerStats {
    return {
      checkpoints: Atomics.load(this.#counters, CHECKPOINTS),
      lastLogFrames: this.lastLogFrames,
      lastCheckpointedFrames: Atomics.load(this.#counters, LAST_CHECKPOINTED),
      failed: this.#failed,
    };
  }

  /** Closes the thread's connection and ends the thread; idempotent. Call before closing the writer, so its close is the last one and removes the WAL. */
  close(): Promise<void> {
    if (!this.#closing) {
      this.#closing = true;
      // Awaiting the thread's exit must keep the process alive until it comes (an unreferenced
      // thread would let the event loop run dry first and end the process mid-close).
      this.#worker.ref();
      if (this.#failed) void this.#worker.terminate();
      else this.#worker.postMessage('close');
    }
    return this.#exited;
  }
}
