import { performance } from 'node:perf_hooks';

import type Database from 'better-sqlite3';

import { QuotaError } from '../../core/errors.js';
import { BACKSTOP_WAL_AUTOCHECKPOINT_PAGES, SQLITE_DEFAULT_WAL_AUTOCHECKPOINT_PAGES, WalCheckpointer } from './sqlite-checkpointer.js';
import { closedStoreError, isSqliteBusy, isSqliteIoError, isSqliteStorageFault, toQuotaError } from './sqlite-errors.js';
import { WalAhead, walFrameBytes } from './sqlite-wal-ahead.js';

/** Named parameters of one statement; every value SQLite can bind. */
export type SqlParams = Readonly<Record<string, string | number | bigint | null>>;

/** Most decisions one group commit holds. */
export const DEFAULT_MAX_BATCH_DECISIONS = 256;
/**
 * Longest the event loop is held running one batch's decisions, in ms; the batch's COMMIT (its one
 * WAL sync) comes after. The remaining queue goes into the next batch, after the loop has turned.
 */
export const DEFAULT_MAX_BATCH_HOLD_MS = 4;

/** How a {@link SqliteConnection} batches writes and waits for another process's lock. */
export interface SqliteConnectionOptions {
  /** How long a queued write may wait for another process's write lock, in ms. */
  readonly busyTimeoutMs: number;
  /** Most decisions in one transaction. @defaultValue {@link DEFAULT_MAX_BATCH_DECISIONS} */
  readonly maxBatchDecisions?: number;
  /** Longest one batch holds the event loop before its COMMIT, ms. @defaultValue {@link DEFAULT_MAX_BATCH_HOLD_MS} */
  readonly maxBatchHoldMs?: number;
  /**
   * The path of the database file (not of its `-wal` file) when it is in WAL mode: from the first
   * commit on, its checkpoints run on a background thread ({@link WalCheckpointer}) instead of
   * inside this connection's commits.
   * Absent (an in-memory database): SQLite checkpoints as usual.
   */
  readonly walDatabasePath?: string;
}

interface QueuedWrite {
  readonly body: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  /** `performance.now()` when it was queued: its busy wait ends at this + the busy timeout. */
  readonly queuedAt: number;
}

// One decision's fate inside the open transaction, known before the COMMIT that decides it.
type Settled = { readonly item: QueuedWrite; readonly ok: true; readonly value: unknown } | { readonly item: QueuedWrite; readonly ok: false; readonly error: unknown };

// A prepared statement, whether it may change the database, and whether it writes a table whose
// rows the write cache holds.
interface Prepared {
  readonly statement: Database.Statement;
  readonly writes: boolean;
  readonly writesCachedTable: boolean;
}

// #runBatch's answer when a decision threw after writing: the transaction was rolled back, and the
// batch's decisions so far are queued again to run in the next transaction.
const RUN_AGAIN = Symbol('run again');

/**
 * The tables whose decoded rows {@link SqliteConnection.cachedInWrite} may keep between write
 * transactions: configuration that nearly every decision reads and few write (tenant quotas, the
 * plane-wide ceiling, halts, the plane-wide halt, model-call ceilings) and the waiting queues. A statement that writes any of them clears
 * the whole cache, so no writer has to remember to.
 */
const CACHED_TABLE_WRITE = /\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM)\s+(?:quota_tenants|quota_plane|quota_plane_halt|quota_halted|quota_waiters|quota_call_ceilings)\b/i;

// After the writer goes back to SQLite's own checkpoints, its WAL file is cut back at each restart
// to this many of SQLite's checkpoint thresholds (a batch may take the log a little past one).
const WAL_LIMIT_LAPS = 2;

/** Most entries the write cache keeps; past this it starts afresh (one entry per tenant and kind). */
const MAX_CACHED_ENTRIES = 10_000;

// Backoff between two attempts to take another process's write lock, ms (doubling, capped).
const FIRST_BUSY_RETRY_MS = 1;
const LAST_BUSY_RETRY_MS = 25;

/**
 * One better-sqlite3 connection shared by a store and all its tenant handles: a cache of prepared
 * statements, group commit of writes, and the closed flag. Every fault that leaves it is a
 * `QuotaError` (translated by `sqlite-errors.ts`).
 *
 * Writes: {@link write} queues a synchronous body and answers a promise.
 * On the next turn of the event loop the queued bodies run in arrival order (FIFO) inside one
 * `BEGIN IMMEDIATE … COMMIT`, so one WAL sync serves them all. A body that throws is undone alone
 * and only its caller gets the error. Most throw before they write anything (a refusal found by
 * reading), and then there is nothing to undo, so bodies run without a `SAVEPOINT` each. When one
 * throws after a statement that may have written, the whole transaction is rolled back, and the
 * bodies of the batch so far, the thrower included, run again first, each in a savepoint of its own
 * (in the next transaction, or the next few if a batch's bounds cut them short), so none of them
 * runs a third time. A body may therefore run twice before it is answered, and must
 * depend only on the database and its own inputs (every body of the stores does). Every
 * caller is answered only after the COMMIT holding its decision succeeded, and a failing BEGIN or
 * COMMIT rejects the whole batch with `STORE_UNAVAILABLE` (nothing in it is acknowledged). A COMMIT
 * that fails with an I/O error says its outcome is unknown (`details.outcome = 'unknown'`): its
 * frames may be in the WAL, and a recovery of the file would replay them. A batch
 * is bounded by {@link DEFAULT_MAX_BATCH_DECISIONS} decisions and {@link DEFAULT_MAX_BATCH_HOLD_MS}
 * ms of loop time; the rest waits for the next turn.
 *
 * Lock waits never block the event loop: the connection's own busy timeout is 0, and a BEGIN that
 * finds another process's write lock is retried on a timer with backoff until each queued write's
 * busy timeout has passed (then `STORE_UNAVAILABLE`). Reads retry a busy file the same way.
 *
 * better-sqlite3 is synchronous, so a body cannot `await`: that is why every decision it calls is
 * a pure synchronous function from `core/`.
 */
export class SqliteConnection {
  #db: Database.Database | null;
  #closing = false;
  readonly #statements = new Map<string, Prepared>();
  // Decoded configuration rows read inside write transactions (see cachedInWrite), valid while
  // #dataVersion says no other connection has committed since they were read.
  readonly #cache = new Map<string, unknown>();
  #dataVersion: number | null = null;
  // True from a batch's BEGIN to its COMMIT or ROLLBACK: only then may the cache answer.
  #inWrite = false;
  // One transaction function for every read: better-sqlite3 builds four wrappers and their
  // properties each time `db.transaction()` is called.
  readonly #readTransaction: Database.Transaction<(body: () => unknown) => unknown>;
  readonly #busyTimeoutMs: number;
  readonly #maxBatchDecisions: number;
  readonly #maxBatchHoldMs: number;
  readonly #control: {
    readonly begin: Database.Statement;
    readonly commit: Database.Statement;
    readonly rollback: Database.Statement;
    readonly savepoint: Database.Statement;
    readonly release: Database.Statement;
    readonly rollbackTo: Database.Statement;
    readonly dataVersion: Database.Statement;
  };
  #queue: QueuedWrite[] = [];
  #head = 0;
  /** A flush is scheduled (setImmediate) or waiting on another process's lock (setTimeout). */
  #pending = false;
  #busyRetryMs = FIRST_BUSY_RETRY_MS;
  #drained: (() => void)[] = [];
  // Set when the running body prepares a statement that may change the database.
  #decisionWrote = false;
  // How many bodies at the head of the queue are to run again after their batch was rolled back
  // whole; every batch that starts while some are left runs each body in a savepoint.
  #guardedBodies = 0;
  // The file whose checkpoints a background thread runs; null for a database without a WAL file,
  // and once that thread could not start.
  #walDatabasePath: string | null;
  // Started by the first commit, so a process that only reads (or an in-memory database) never has one.
  #checkpointer: WalCheckpointer | null = null;
  // Keeps the WAL file written ahead of its frames; started with the checkpointer.
  #walAhead: WalAhead | null = null;
  // Set once the writer went back to SQLite's own checkpoints (the thread failed, or the disk did).
  #checkpointsOnOwn = false;

  constructor(db: Database.Database, options: SqliteConnectionOptions) {
    this.#db = db;
    this.#busyTimeoutMs = options.busyTimeoutMs;
    this.#maxBatchDecisions = options.maxBatchDecisions ?? DEFAULT_MAX_BATCH_DECISIONS;
    this.#maxBatchHoldMs = options.maxBatchHoldMs ?? DEFAULT_MAX_BATCH_HOLD_MS;
    // Waiting is done here, on timers; SQLite's own busy handler would sleep the whole process.
    db.pragma('busy_timeout = 0');
    // Savepoint journals stay in memory instead of temporary files.
    db.pragma('temp_store = MEMORY');
    this.#walDatabasePath = options.walDatabasePath ?? null;
    this.#readTransaction = db.transaction((body: () => unknown) => body());
    this.#control = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT quotaplane_decision'),
      release: db.prepare('RELEASE quotaplane_decision'),
      rollbackTo: db.prepare('ROLLBACK TO quotaplane_decision'),
      dataVersion: db.prepare('PRAGMA data_version').pluck(),
    };
  }

  /** True once {@link close} was called. */
  get isClosed(): boolean {
    return this.#db === null || this.#closing;
  }

  /**
   * Queues `body` to run inside `BEGIN IMMEDIATE` with the other writes of this turn (see the class
   * comment): the write lock is taken before the first read, so two processes deciding on one file
   * serialise instead of one failing when it upgrades a read to a write.
   * Resolves with what `body` returned once its transaction committed; rejects with what it threw
   * (as a `QuotaError`, its own writes rolled back), or with `STORE_UNAVAILABLE` when the batch
   * could not begin or commit, when another process held the lock past the busy timeout, or once
   * the connection is closed. `body` must be synchronous.
   */
  write<T>(body: () => T): Promise<T> {
    if (this.isClosed) return Promise.reject(closedStoreError());
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ body, resolve: resolve as (value: unknown) => void, reject, queuedAt: performance.now() });
      if (!this.#pending) {
        this.#pending = true;
        setImmediate(this.#flush);
      }
    });
  }

  /**
   * Runs `body` in a deferred (read) transaction, so its statements read one snapshot. WAL readers
   * do not wait for the writer; a file that is busy anyway (another process recovering the WAL) is
   * retried on a timer within the busy timeout, never by blocking the event loop.
   */
  async read<T>(body: () => T): Promise<T> {
    const deadline = performance.now() + this.#busyTimeoutMs;
    let waitMs = FIRST_BUSY_RETRY_MS;
    for (;;) {
      this.#open();
      try {
        return this.#readTransaction.deferred(body) as T;
      } catch (error) {
        if (!isSqliteBusy(error) || performance.now() + waitMs > deadline) throw toQuotaError(error);
      }
      await sleep(waitMs);
      waitMs = Math.min(waitMs * 2, LAST_BUSY_RETRY_MS);
    }
  }

  /** First row of `sql`, or `undefined`. Call inside a {@link write} or {@link read} body. */
  get<Row>(sql: string, params: SqlParams): Row | undefined {
    return this.#prepare(sql).get(params) as Row | undefined;
  }

  /** Every row of `sql`. Call inside a {@link write} or {@link read} body. */
  all<Row>(sql: string, params: SqlParams): Row[] {
    return this.#prepare(sql).all(params) as Row[];
  }

  /** {@link all} with positional (`?`) parameters, for a list of keys. Call inside a {@link write} or {@link read} body. */
  allPositional<Row>(sql: string, params: readonly (string | number | bigint | null)[]): Row[] {
    return this.#prepare(sql).all(...params) as Row[];
  }

  /** Runs a write statement and answers how many rows it changed. Call inside a {@link write} body. */
  run(sql: string, params: SqlParams): number {
    return this.#prepare(sql).run(params).changes;
  }

  /** {@link run} with positional (`?`) parameters, for a statement of many rows. Call inside a {@link write} body. */
  runPositional(sql: string, params: readonly (string | number | bigint | null)[]): number {
    return this.#prepare(sql).run(...params).changes;
  }

  /**
   * What `load` answers for `key`, kept between write transactions (otherwise an admission reads
   * the tenant's quota, its halts, the plane-wide ceiling and its waiting queue each time, and
   * decodes the JSON ones). Inside a {@link write} body the first call runs `load` and later calls
   * answer its value, until one of these clears the cache: another connection (another process, or
   * another store on the same file) commits, as `PRAGMA data_version` tells at the next batch's
   * BEGIN; a statement of this connection writes a cached table (`quota_tenants`, `quota_plane`,
   * `quota_plane_halt`, `quota_halted`, `quota_waiters`); or a decision, batch or commit is rolled back, which may undo
   * a write a cached value was read after. Outside a write body (in {@link read}) `load` always
   * runs. `load` must read only those tables. Its value is shared by every decision that asks, so
   * it is frozen, deeply: a user that tried to change it would throw instead of changing another
   * decision's input.
   */
  cachedInWrite<T>(key: string, load: () => T): T {
    if (!this.#inWrite) return load();
    if (this.#cache.has(key)) return this.#cache.get(key) as T;
    const value = deepFreeze(load());
    if (this.#cache.size >= MAX_CACHED_ENTRIES) this.#cache.clear();
    this.#cache.set(key, value);
    return value;
  }

  /**
   * Closes the connection once every queued write has been answered; idempotent. Writes queued
   * after this call, and every later call, fail with `STORE_UNAVAILABLE`.
   */
  async close(): Promise<void> {
    if (this.#db === null) return;
    this.#closing = true;
    if (this.#pending) await new Promise<void>((resolve) => this.#drained.push(resolve));
    // The checkpointer's connection closes first, so this one is the last and its close removes the WAL.
    await this.#checkpointer?.close();
    this.#walAhead?.close();
    const db = this.#db;
    if (db === null) return;
    this.#db = null;
    this.#statements.clear();
    try {
      db.close();
    } catch (error) {
      throw toQuotaError(error);
    }
  }

  // ── group commit ──────────────────────────────────────────────────────────

  readonly #flush = (): void => {
    const db = this.#db;
    if (db === null || this.#head === this.#queue.length) {
      this.#idle();
      return;
    }
    try {
      this.#control.begin.run();
    } catch (error) {
      if (isSqliteBusy(error)) {
        this.#waitForLock(error);
        return;
      }
      this.#noteStorageFault(error);
      this.#rejectQueued(asUnavailable(error, 'begin'));
      this.#idle();
      return;
    }
    this.#busyRetryMs = FIRST_BUSY_RETRY_MS;
    // The write lock is held and nothing is written yet: the one moment zeros may go past the WAL's end.
    if (this.#checkpointer !== null && this.#walAhead !== null) {
      this.#walAhead.extend(this.#checkpointer.lastLogFrames);
      // Its own write failed (a full disk, say): the writer's checkpoints go back to SQLite's.
      if (this.#walAhead.stopped) this.#checkpointOnOwn();
    }
    this.#startWrite();
    const settled = this.#queue.length - this.#head === 1 ? this.#runAlone(db) : this.#runBatch(db);
    if (settled !== RUN_AGAIN) this.#commit(db, settled);
    this.#inWrite = false;
    this.#next();
  };

  // The write lock is held: nothing else can commit until this transaction ends, so a cache that is
  // valid now stays valid through it. It is valid if no other connection committed since it was filled.
  #startWrite(): void {
    let version: number | null = null;
    try {
      version = this.#control.dataVersion.get() as number;
    } catch {
      // Unknown: start afresh (the decisions' own statements will report a real fault).
    }
    if (version === null || version !== this.#dataVersion) this.#cache.clear();
    this.#dataVersion = version;
    this.#inWrite = true;
  }

  // A batch of one decision needs no savepoint: the transaction is the decision's own, so a body
  // that throws rolls the whole transaction back and only its caller (the only one) gets the error.
  // Two statements fewer per decision, and no page copied to a savepoint journal.
  #runAlone(db: Database.Database): Settled[] | null {
    const item = this.#take();
    try {
      return [{ item, ok: true, value: item.body() }];
    } catch (error) {
      this.#cache.clear();
      this.#noteStorageFault(error);
      try {
        if (db.inTransaction) this.#control.rollback.run();
      } catch {
        // Nothing of this transaction was committed either way; the body's fault is the answer.
      }
      item.reject(toQuotaError(error));
      return null;
    }
  }

  // Runs queued bodies until the batch is full or has held the loop long enough. Returns each one's
  // fate; null when the transaction was lost (SQLite rolled it back after an I/O fault or a full
  // disk): then every decision taken into it is already rejected; or RUN_AGAIN when a body threw
  // after it may have written (see the class comment). (`#runAlone` answers null too, after rolling
  // back a lone decision that threw: nothing to commit.)
  #runBatch(db: Database.Database): Settled[] | null | typeof RUN_AGAIN {
    const started = performance.now();
    const settled: Settled[] = [];
    // A batch that starts with bodies run again guards every body it runs, so no later body's
    // throw can roll them back a second time.
    const guarded = this.#guardedBodies > 0;
    const { savepoint, release, rollbackTo } = this.#control;
    let current: QueuedWrite | null = null;
    try {
      while (this.#head < this.#queue.length && settled.length < this.#maxBatchDecisions) {
        if (settled.length > 0 && performance.now() - started >= this.#maxBatchHoldMs) break;
        current = this.#take();
        this.#decisionWrote = false;
        if (guarded) savepoint.run();
        try {
          const value = current.body();
          if (guarded) release.run();
          settled.push({ item: current, ok: true, value });
        } catch (error) {
          this.#noteStorageFault(error);
          if (!db.inTransaction) throw error;
          if (guarded) {
            this.#cache.clear();
            rollbackTo.run();
            release.run();
          } else if (this.#decisionWrote) {
            return this.#rollBackAndRunAgain([...settled.map((each) => each.item), current]);
          }
          settled.push({ item: current, ok: false, error: toQuotaError(error) });
        }
        current = null;
      }
      return settled;
    } catch (error) {
      this.#cache.clear();
      this.#noteStorageFault(error);
      try {
        if (db.inTransaction) this.#control.rollback.run();
      } catch {
        // The first fault is the one to report.
      }
      const fault = asUnavailable(error, 'decide');
      current?.reject(toQuotaError(error));
      for (const earlier of settled) earlier.item.reject(fault);
      return null;
    }
  }

  // A body threw after a statement that may have written, and no savepoint holds what it wrote:
  // roll the whole transaction back, and queue every body this batch ran, the thrower last, to run
  // again first, each in a savepoint. The thrower is answered after that batch's COMMIT, as any
  // decision is (its error, or STORE_UNAVAILABLE if that COMMIT fails).
  #rollBackAndRunAgain(ran: readonly QueuedWrite[]): typeof RUN_AGAIN {
    this.#cache.clear();
    this.#control.rollback.run();
    this.#queue = [...ran, ...this.#queue.slice(this.#head)];
    this.#head = 0;
    this.#guardedBodies = ran.length;
    return RUN_AGAIN;
  }

  #commit(db: Database.Database, settled: Settled[] | null): void {
    if (settled === null) return;
    try {
      this.#control.commit.run();
    } catch (error) {
      this.#cache.clear();
      this.#noteStorageFault(error);
      try {
        if (db.inTransaction) this.#control.rollback.run();
      } catch {
        // The COMMIT's fault is the one to report; the connection rolls back on its own when it can.
      }
      const fault = asUnavailable(error, 'commit');
      for (const each of settled) each.item.reject(fault);
      return;
    }
    // Answered first: the decisions are on disk, and nothing after the COMMIT may stand between them and their callers.
    for (const each of settled) {
      if (each.ok) each.item.resolve(each.value);
      else each.item.reject(each.error);
    }
    this.#nudgeCheckpointer(db);
  }

  // A commit added WAL frames: the background thread copies them into the database file. Never
  // throws: a thread that cannot start (no threads left, say) leaves the checkpoints to SQLite.
  #nudgeCheckpointer(db: Database.Database): void {
    if (this.#checkpointer === null) {
      if (this.#walDatabasePath === null) return;
      try {
        db.pragma(`wal_autocheckpoint = ${BACKSTOP_WAL_AUTOCHECKPOINT_PAGES}`);
        // A checkpointer that cannot run hands checkpoints back to this connection, at SQLite's default
        // size, and the WAL then starts over long before it could use frames written ahead.
        this.#checkpointer = new WalCheckpointer(this.#walDatabasePath, () => this.#checkpointOnOwn());
        this.#walAhead = new WalAhead(db, BACKSTOP_WAL_AUTOCHECKPOINT_PAGES);
      } catch {
        this.#walDatabasePath = null;
        this.#checkpointOnOwn();
        return;
      }
    }
    this.#checkpointer.nudge();
  }

  // SQLite's own automatic checkpoints, as a connection without the background thread has them.
  // The WAL-ahead stops, and gives back its zeros at the next BEGIN (the write lock is needed).
  // The WAL file may have grown far past what SQLite's threshold needs (up to the backstop, about
  // 20 MB): a size limit makes SQLite cut it back the next time the log starts over, so the space
  // goes back to the disk once a checkpoint could run.
  #checkpointOnOwn(): void {
    if (this.#checkpointsOnOwn) return;
    this.#checkpointsOnOwn = true;
    try {
      const db = this.#db;
      if (db !== null) {
        db.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_WAL_AUTOCHECKPOINT_PAGES}`);
        db.pragma(`journal_size_limit = ${WAL_LIMIT_LAPS * SQLITE_DEFAULT_WAL_AUTOCHECKPOINT_PAGES * walFrameBytes(db)}`);
      }
    } catch {
      // A connection that cannot set it is failing anyway; its next statement reports why.
    }
    this.#walAhead?.stop();
  }

  // A full disk or an I/O error (SQLITE_FULL, SQLITE_IOERR_*) anywhere in a batch: the disk may
  // have no byte left, and a WAL let grow to the background thread's backstop
  // (BACKSTOP_WAL_AUTOCHECKPOINT_PAGES, about 20 MB) plus zeros written ahead could then hold the
  // space a checkpoint needs to grow the database file, so the WAL would never start over and
  // every write would be refused until someone freed space elsewhere. From here on, until the
  // store is reopened, the writer checkpoints at SQLite's own threshold and the zeros are given back.
  #noteStorageFault(error: unknown): void {
    if (this.#checkpointer === null || !isSqliteStorageFault(error)) return;
    this.#checkpointOnOwn();
  }

  // Another process holds the write lock: answer the writes that waited their whole busy timeout,
  // and try again after a short, growing pause (the event loop keeps running meanwhile).
  #waitForLock(busy: unknown): void {
    const now = performance.now();
    const fault = toQuotaError(busy);
    while (this.#head < this.#queue.length && (this.#queue[this.#head] as QueuedWrite).queuedAt + this.#busyTimeoutMs <= now) {
      this.#take().reject(fault);
    }
    if (this.#head === this.#queue.length) {
      this.#busyRetryMs = FIRST_BUSY_RETRY_MS;
      this.#idle();
      return;
    }
    const oldest = (this.#queue[this.#head] as QueuedWrite).queuedAt;
    const waitMs = Math.max(1, Math.min(this.#busyRetryMs, oldest + this.#busyTimeoutMs - now));
    this.#busyRetryMs = Math.min(this.#busyRetryMs * 2, LAST_BUSY_RETRY_MS);
    setTimeout(this.#flush, waitMs);
  }

  #take(): QueuedWrite {
    const item = this.#queue[this.#head] as QueuedWrite;
    this.#head += 1;
    if (this.#guardedBodies > 0) this.#guardedBodies -= 1;
    if (this.#head === this.#queue.length) {
      this.#queue = [];
      this.#head = 0;
    }
    return item;
  }

  #rejectQueued(fault: QuotaError): void {
    while (this.#head < this.#queue.length) this.#take().reject(fault);
  }

  // More writes queued meanwhile: they form the next batch, after the event loop has turned.
  #next(): void {
    if (this.#head < this.#queue.length) setImmediate(this.#flush);
    else this.#idle();
  }

  #idle(): void {
    this.#pending = false;
    const waiting = this.#drained;
    this.#drained = [];
    for (const resolve of waiting) resolve();
  }

  #open(): Database.Database {
    if (this.#db === null) throw closedStoreError();
    return this.#db;
  }

  #prepare(sql: string): Database.Statement {
    let prepared = this.#statements.get(sql);
    if (prepared === undefined) {
      const statement = this.#open().prepare(sql);
      prepared = { statement, writes: !statement.readonly, writesCachedTable: CACHED_TABLE_WRITE.test(sql) };
      this.#statements.set(sql, prepared);
    }
    // Marked before it runs: a write that fails part-way is undone by SQLite, but marking it anyway
    // costs at most a batch run again, never a write left in place.
    if (prepared.writes) this.#decisionWrote = true;
    if (prepared.writesCachedTable) this.#cache.clear();
    return prepared.statement;
  }
}

// A batch that could not begin, decide or commit answers every caller in it with STORE_UNAVAILABLE:
// none of its decisions is on disk, so none may be acted on.
function asUnavailable(error: unknown, step: 'begin' | 'decide' | 'commit'): QuotaError {
  const fault = toQuotaError(error);
  if (step === 'commit' && isSqliteIoError(error)) return commitOutcomeUnknown(fault, error);
  if (fault.code === 'STORE_UNAVAILABLE') return fault;
  return new QuotaError(
    'STORE_UNAVAILABLE',
    `the SQLite quota store could not ${step === 'decide' ? 'keep' : step} the transaction holding this decision (${fault.message}); nothing was decided, retry later`,
    { details: { backend: 'sqlite', step }, cause: error },
  );
}

// A COMMIT that failed with an I/O error may have written every frame of its transaction, commit
// mark included, before the fault (a failed sync of the WAL, or a failure to index frames already
// synced). SQLite rolls the transaction back in this process, but the frames stay in the WAL file:
// a later commit overwrites them, yet if none comes before the file is recovered (the store is
// closed and reopened, or the process dies), recovery replays them and the decision stands. None of
// it was acknowledged, so nobody may act on it; but the caller must not be told it was not made.
// (A full disk fails the write of a frame, before the commit mark, so SQLITE_FULL is not this case.)
function commitOutcomeUnknown(fault: QuotaError, error: unknown): QuotaError {
  const code = typeof fault.details.code === 'string' ? fault.details.code : 'SQLITE_IOERR';
  const text = error instanceof Error ? error.message : String(error);
  return new QuotaError(
    'STORE_UNAVAILABLE',
    `the SQLite quota store could not confirm the commit of the transaction holding this decision (${code}: ${text}); ` +
      'it was not acknowledged, so do not act on it, but it may still be on the books once the file is recovered: ' +
      'retry the same call to learn its outcome (an admission with the same run id, the same settle), ' +
      'and check the disk holding the file (a full disk is the usual cause, a failing one the other)',
    { details: { backend: 'sqlite', step: 'commit', code, outcome: 'unknown' }, cause: error },
  );
}

// Freezes `value` and everything it holds (the cache's values are plain decoded rows).
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
