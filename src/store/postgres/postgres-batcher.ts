import { QuotaError } from '../../core/errors.js';
import { compareBytewise } from '../byte-order.js';
import { waitedTooLong } from '../applied-instant.js';
import { MAX_INSTANT_MS } from '../../core/instant.js';
import type { AppliedInstant } from '../types.js';
import { BatchFacts, FactsMissing } from './postgres-books-facts.js';
import { loadFacts, takeEvents, writeFacts, writeKeptFacts, type BooksQueries, type KeptWrite, type WriteFault } from './postgres-books-io.js';
import { BooksCache } from './postgres-books-cache.js';
import type { PostgresConnection, TransactionClient } from './postgres-connection.js';
import { batchFailedError, closedStoreError, toQuotaError } from './postgres-errors.js';
import { prefetch, type PostgresTenantBooks } from './postgres-tenant-books.js';
import { PostgresQueueBooks } from './postgres-queue-books.js';
import { periodKey } from '../../core/period.js';
import { boundsPlane } from '../../core/plane-ceiling.js';
import { decodePlaneCeiling } from '../plane-rows.js';

/** How a store groups its decisions: see {@link PostgresBatcher}. */
export interface BatchSettings {
  /** Most decisions in one batch (one transaction). */
  readonly maxBatch: number;
  /** Most batches in flight at once, each on its own pooled connection. */
  readonly lanes: number;
}

/** Queued decisions per batch before the queue is split over several batches in flight. */
const DECISIONS_PER_LANE = 8;

/** The most decisions one batch may carry. */
export const MAX_BATCH = 64;

/** The defaults: 32 decisions a batch, one batch in flight per two pooled connections (at least one). */
export function defaultBatchSettings(poolSize: number): BatchSettings {
  return { maxBatch: 32, lanes: Math.max(1, Math.floor(poolSize / 2)) };
}

/**
 * One decision for the batcher: `decide` runs core's decision on the books at the instant it is
 * applied, synchronously, given the tenant's books and the queues of every tenant the batch may
 * hold; it may run more than once (a read of a fact not loaded yet undoes what it wrote and runs
 * it again once the fact is loaded), so it must do nothing but read and write the books.
 * - `tenant`: the tenant whose lock it needs (`'*'`: none of its own, a plane-wide round);
 * - `atMs`, `applied`: the instant asked, and the plane's clock and bound when the decision is
 *   applied at the instant its tenant's lock is held (see `store/applied-instant.ts`);
 * - `name`: how a waited-too-long fault names it;
 * - `run`, `agent`, `queue`: the run and agent it is about, and whether it reads the tenant's
 *   waiting queue, read ahead with the tenant's figures.
 */
export interface BooksDecision<T> {
  readonly tenant: string;
  readonly name: string;
  readonly atMs: number;
  readonly applied?: AppliedInstant | undefined;
  readonly run?: string;
  readonly agent?: string | null;
  readonly queue?: boolean;
  readonly decide: (books: PostgresTenantBooks, atMs: number, queues: PostgresQueueBooks) => T;
}

interface Pending {
  readonly decision: BooksDecision<unknown>;
  readonly resolve: (answer: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type Settled = { readonly ok: true; readonly answer: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * How often one decision may find a fact missing before the batch gives up on it: each load reads
 * at least one fact it lacked, and a plane-wide round reads the queues and runs of many tenants.
 */
const MAX_LOADS_PER_DECISION = 256;

/**
 * Group commit for one PostgreSQL store instance: decisions that arrive while earlier ones are in
 * flight share one transaction, in which `core/` decides each in turn on the books of its tenant
 * (postgres-tenant-books.ts): the batch takes its tenants' locks and reads their facts in one
 * statement, decides, and writes every changed row in one statement (migrations/0001_quotaplane.sql).
 *
 * - FIFO per tenant: decisions leave the queue in arrival order, at most `maxBatch` at a time; a
 *   batch goes out as soon as a lane is free (on the next event-loop turn, so calls made together
 *   travel together), so a lone caller waits for nobody. A decision whose tenant is in a batch
 *   still in flight waits for a later batch (that batch holds the tenant's lock until it commits).
 *   When the queue holds more than 8 decisions per free lane, it is split over several batches
 *   (all of a tenant's decisions in one), which commit side by side on their own connections and
 *   never queue behind one another's locks.
 * - A decision that throws (a refusal such as `CONFLICT`, or an unreadable row) is undone alone;
 *   only its caller gets the error.
 * - Decisions asked without an instant of their own are applied at the plane's clock read once
 *   the batch holds its tenants' locks; one that waited longer than its bound is refused with
 *   `STORE_UNAVAILABLE` (`waited-too-long`) and decides nothing.
 * - Callers are answered only after the statement returned, that is after its transaction
 *   committed. If the batch fails as a whole, every caller in it is rejected with the same
 *   `STORE_UNAVAILABLE`, and nothing in it was acknowledged: when the server refused it (statement
 *   cancelled, commit refused) or it was never sent, nothing in it committed; when its reply never
 *   came (query timeout, connection lost mid-statement) it may all have committed, and the fault
 *   says the outcome is unknown (`details.outcome = 'unknown'`; see `PostgresConnection.decide`).
 */
export class PostgresBatcher {
  readonly #db: PostgresConnection;
  readonly #q: BooksQueries;
  readonly #settings: BatchSettings;
  #queue: Pending[] = [];
  #inFlight = 0;
  #scheduled = false;
  readonly #busyTenants = new Set<string>();
  readonly #cache = new BooksCache();

  constructor(db: PostgresConnection, q: BooksQueries, settings: BatchSettings) {
    this.#db = db;
    this.#q = q;
    this.#settings = settings;
  }

  /** Queues one decision and answers what it decided once that committed (see {@link BooksDecision}). */
  decide<T>(decision: BooksDecision<T>): Promise<T> {
    if (this.#db.isClosed) return Promise.reject(closedStoreError());
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ decision: decision as BooksDecision<unknown>, resolve: resolve as (answer: unknown) => void, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.#settings.lanes) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#drain();
    });
  }

  #drain(): void {
    const free = this.#settings.lanes - this.#inFlight;
    if (free <= 0 || this.#queue.length === 0) return;
    // Parallel batches only when each would carry several decisions: a batch's fixed cost (its
    // round trip, its locks, its commit) is shared by what it carries.
    for (const batch of this.#take(Math.min(free, Math.ceil(this.#queue.length / DECISIONS_PER_LANE)))) {
      const tenants = new Set(batch.map((pending) => pending.decision.tenant));
      for (const tenant of tenants) this.#busyTenants.add(tenant);
      this.#inFlight += 1;
      void this.#send(batch).finally(() => {
        for (const tenant of tenants) this.#busyTenants.delete(tenant);
        this.#inFlight -= 1;
        if (this.#queue.length > 0) this.#schedule();
      });
    }
  }

  // Up to `lanes` batches of the oldest decisions whose tenants no batch in flight holds, each
  // tenant's decisions in one batch (in order), tenants dealt round-robin so the batches commit
  // side by side. A batch holds its tenants' locks until it commits, so one sent for a busy tenant
  // would only wait for them; left queued (in order), such decisions go in a later batch instead.
  #take(lanes: number): Pending[][] {
    const batches: Pending[][] = [];
    const laneOf = new Map<string, number>();
    const kept: Pending[] = [];
    for (const pending of this.#queue) {
      const tenant = pending.decision.tenant;
      let lane = laneOf.get(tenant);
      if (lane === undefined && !this.#busyTenants.has(tenant)) {
        lane = laneOf.size % lanes;
        laneOf.set(tenant, lane);
      }
      const batch = lane === undefined ? undefined : (batches[lane] ??= []);
      if (batch !== undefined && batch.length < this.#settings.maxBatch) batch.push(pending);
      else kept.push(pending);
    }
    this.#queue = kept;
    return batches.filter((batch) => batch.length > 0);
  }

  async #send(batch: readonly Pending[]): Promise<void> {
    const decisions = batch.map((pending) => pending.decision);
    let settled: Settled[];
    try {
      settled = (await this.#decideOnKept(decisions)) ?? (await this.#decideLocked(decisions));
    } catch (error) {
      const fault = error instanceof QuotaError && error.code === 'STORE_UNAVAILABLE' ? error : batchFailedError(error);
      for (const pending of batch) pending.reject(fault);
      return;
    }
    batch.forEach((pending, index) => {
      const answer = settled[index] as Settled;
      if (answer.ok) pending.resolve(answer.answer);
      else pending.reject(answer.error);
    });
  }

  // The batch under its tenants' locks: read, decided and written in one transaction, its rows
  // then kept for the next batch. When the server refuses the write, the batch is decided again
  // and each decision written on its own, so only the one whose rows the server refuses is refused.
  async #decideLocked(decisions: readonly BooksDecision<unknown>[]): Promise<Settled[]> {
    try {
      const { settled, facts } = await this.#db.transaction((tx) => decideBatch(tx, this.#q, decisions, 'together'), { deferBegin: true });
      this.#cache.unboundedPlane = unboundedPlane(facts.plane.ceiling);
      this.#cache.planeHalt = facts.plane.halt?.raw;
      for (const tenantFacts of facts.tenants.values()) this.#cache.keep(tenantFacts, tenantFacts.version);
      return settled;
    } catch (error) {
      for (const decision of decisions) this.#cache.drop(decision.tenant);
      if (!(error instanceof WriteRefused)) throw error;
      if (decisions.length === 1) return [{ ok: false, error: refusedWrite(error.fault) }];
      return (await this.#db.transaction((tx) => decideBatch(tx, this.#q, decisions, 'each'))).settled;
    }
  }

  // The batch on the rows its tenants' last batch here kept (postgres-books-cache.ts), written in
  // one statement if nobody else wrote those tenants' books since and the runs taken to be new
  // still are. Answers `null`, having forgotten the rows, when a tenant's rows are not kept, a
  // decision needs a fact they lack, or the write finds them stale: the batch is then decided
  // under the locks. No plane ceiling may be set (its counts are read under the plane lock). The
  // plane-wide halt is the one the last batch read with the ceiling, and the write checks it.
  async #decideOnKept(decisions: readonly BooksDecision<unknown>[]): Promise<Settled[] | null> {
    const plane = this.#cache.unboundedPlane;
    const planeHalt = this.#cache.planeHalt;
    if (plane === undefined || planeHalt === undefined) return null;
    const facts = new BatchFacts();
    for (const decision of decisions) {
      if (decision.tenant === PLANE_WIDE) return null;
      if (facts.tenants.has(decision.tenant)) continue;
      const kept = this.#cache.get(decision.tenant);
      if (kept === undefined) return null;
      facts.tenants.set(decision.tenant, kept);
      facts.locked.add(decision.tenant);
    }
    for (const kept of facts.tenants.values()) kept.speculative = true;
    facts.plane.ceiling = { raw: plane };
    facts.plane.halt = { raw: planeHalt };
    const forget = (): null => {
      for (const tenant of facts.tenants.keys()) this.#cache.drop(tenant);
      return null;
    };
    const settled: Settled[] = [];
    for (const [index, decision] of decisions.entries()) {
      let atMs: number;
      try {
        atMs = appliedAt(decision);
      } catch (error) {
        settled[index] = { ok: false, error };
        continue;
      }
      const queues = new PostgresQueueBooks(facts);
      const mark = facts.mark();
      try {
        settled[index] = { ok: true, answer: decision.decide(queues.tenant(decision.tenant), atMs, queues) };
      } catch (error) {
        facts.undoTo(mark);
        if (error instanceof FactsMissing) return forget();
        settled[index] = { ok: false, error };
      }
    }
    let written: KeptWrite;
    try {
      written = await writeKeptFacts(this.#db, this.#q, facts);
    } catch (error) {
      forget();
      throw error;
    }
    if (!written.written) return forget();
    for (const tenantFacts of facts.tenants.values()) this.#cache.keep(tenantFacts, (tenantFacts.version ?? 0) + (written.raised ? 1 : 0));
    return settled;
  }
}

// The plane ceiling as stored when it bounds nothing (`null`: none), else `undefined` (one that
// bounds, or one not read or unreadable).
function unboundedPlane(ceiling: { readonly raw: unknown } | undefined): unknown {
  if (ceiling === undefined) return undefined;
  if (ceiling.raw === null) return null;
  try {
    return boundsPlane(decodePlaneCeiling(ceiling.raw)) ? undefined : ceiling.raw;
  } catch {
    return undefined;
  }
}

/** The server refused a batch's write; nothing of the batch is written. */
class WriteRefused extends QuotaError {
  readonly fault: WriteFault;

  constructor(fault: WriteFault) {
    super('STORE_UNAVAILABLE', `the PostgreSQL quota store refused a batch's write (SQLSTATE ${fault.code}: ${fault.message})`);
    this.fault = fault;
  }
}

// The fault of a decision whose own write the server refused, as a direct statement's error reads.
function refusedWrite(fault: WriteFault): QuotaError {
  const { code, message, detail, hint } = fault;
  return toQuotaError(Object.assign(new Error(message), { code, detail: detail ?? undefined, hint: hint ?? undefined }));
}

// The instant `decision` is applied at, read once its tenant's lock is held: the plane's clock
// (never before the instant asked), or the instant asked without one. A clock that throws or
// answers no instant must not fail the other decisions of the batch: this one is then decided at
// the instant it was asked. Throws waited-too-long past the decision's bound.
function appliedAt(decision: BooksDecision<unknown>): number {
  const applied = decision.applied;
  if (applied === undefined) return decision.atMs;
  let nowMs: number;
  try {
    nowMs = applied.nowMs();
  } catch {
    nowMs = decision.atMs;
  }
  if (!Number.isSafeInteger(nowMs) || nowMs < 0 || nowMs > MAX_INSTANT_MS) nowMs = decision.atMs;
  const waitedMs = nowMs - decision.atMs;
  if (waitedMs > applied.maxWaitMs) throw waitedTooLong(decision.name, waitedMs, applied.maxWaitMs);
  return Math.max(decision.atMs, nowMs);
}

// The period keys a decision at `atMs` may read: its month and its day.
function periodsAt(atMs: number): string[] {
  return [periodKey('monthly', atMs), periodKey('daily', atMs)];
}

/**
 * Decides `decision` inside the caller's transaction `tx` (after writes of its own, such as a new
 * quota), as a batch of one: its changed rows are written before this returns. Throws what the
 * decision threw, or the server's refusal of its write.
 */
export async function decideNow<T>(tx: TransactionClient, q: BooksQueries, decision: BooksDecision<T>): Promise<T> {
  const [answer] = (await decideBatch(tx, q, [decision as BooksDecision<unknown>], 'together')).settled;
  if (answer === undefined || !answer.ok) throw answer?.error;
  return answer.answer as T;
}

/** The tenant a plane-wide decision names: it holds no lock of its own. */
export const PLANE_WIDE = '*';

/**
 * Decides `decisions` in one transaction on `tx`: takes the tenants' locks (bytewise order) and
 * reads the facts they will need in one statement, stamps the instants, decides each in turn on
 * the books (loading what a decision finds missing, and deciding it again), and writes every
 * changed row in one statement (`together`), or after each decision (`each`: a decision whose
 * write the server refuses is refused alone, and the others stand). Throws `WriteRefused` when a
 * `together` write is refused.
 */
async function decideBatch(
  tx: TransactionClient,
  q: BooksQueries,
  decisions: readonly BooksDecision<unknown>[],
  mode: 'together' | 'each',
): Promise<{ settled: Settled[]; facts: BatchFacts }> {
  let facts = new BatchFacts();
  const tenants = [...new Set(decisions.map((decision) => decision.tenant))].filter((tenant) => tenant !== PLANE_WIDE).sort(compareBytewise);
  const guessMs = Date.now();
  for (const decision of decisions) {
    if (decision.tenant === PLANE_WIDE) continue;
    const atMs = decision.applied === undefined ? decision.atMs : Math.max(decision.atMs, guessMs);
    prefetch(facts, decision.tenant, {
      run: decision.run,
      agent: decision.agent ?? null,
      periods: atMs > 0 ? periodsAt(atMs) : [],
      queue: decision.queue === true,
    });
  }
  facts.plane.wantCeiling = true;
  await loadFacts(tx, q, facts, { lock: tenants, opens: true });
  const settled: Settled[] = [];
  const instants: (number | null)[] = decisions.map((decision, index) => {
    try {
      return appliedAt(decision);
    } catch (error) {
      settled[index] = { ok: false, error };
      return null;
    }
  });
  // Writes what was decided since the last write, and goes on from the books as they then stand.
  // Decided one by one, each write leaves its events out, and they are appended after the last:
  // the events lock must be the last lock the transaction takes, and a later decision may still
  // take the plane's or an audit lock (migration 0004, quota_events_append).
  let written = facts;
  const heldEvents: unknown[] = [];
  const write = async (closes = false): Promise<WriteFault | null> => {
    written = facts;
    const events = mode === 'each' ? takeEvents(facts) : [];
    const fault = await writeFacts(tx, q, facts, closes);
    if (fault === null) heldEvents.push(...events);
    const locked = facts.locked;
    facts = new BatchFacts();
    for (const tenant of locked) facts.locked.add(tenant);
    facts.plane.wantCeiling = true;
    if (fault !== null && mode === 'together') throw new WriteRefused(fault);
    return fault;
  };
  for (const [index, decision] of decisions.entries()) {
    const atMs = instants[index];
    if (atMs === null || atMs === undefined) continue;
    let answer = await decideOne(tx, q, facts, decision, atMs);
    if (mode === 'each') {
      const fault = await write();
      if (fault !== null) answer = { ok: false, error: refusedWrite(fault) };
    }
    settled[index] = answer;
  }
  // Together, the write is the batch's last statement and goes with its COMMIT.
  await write(mode === 'together');
  if (heldEvents.length > 0) await tx.rows(q.appendEvents, [JSON.stringify(heldEvents)]);
  return { settled, facts: written };
}

async function decideOne(tx: TransactionClient, q: BooksQueries, facts: BatchFacts, decision: BooksDecision<unknown>, atMs: number): Promise<Settled> {
  const queues = new PostgresQueueBooks(facts);
  const books = queues.tenant(decision.tenant);
  for (let loads = 0; ; loads += 1) {
    const mark = facts.mark();
    try {
      return { ok: true, answer: decision.decide(books, atMs, queues) };
    } catch (error) {
      facts.undoTo(mark);
      if (!(error instanceof FactsMissing)) return { ok: false, error };
      if (loads >= MAX_LOADS_PER_DECISION || !facts.wanting) {
        return { ok: false, error: new QuotaError('STORE_UNAVAILABLE', `the ${decision.name} read the books ${loads} times and still missed a fact; retry`) };
      }
      await loadFacts(tx, q, facts);
    }
  }
}

