import { QuotaError } from '../../core/errors.js';
import { MAX_INSTANT_MS } from '../../core/instant.js';
import { waitedTooLong } from '../applied-instant.js';
import type { AppliedInstant } from '../types.js';
import type { BatchedDecision } from './postgres-batch-ops.js';
import type { PostgresConnection, SqlValues } from './postgres-connection.js';
import { batchFailedError, closedStoreError, toQuotaError } from './postgres-errors.js';
import { decisionMismatch } from './postgres-outcomes.js';

/** How a store groups its decisions: see {@link PostgresBatcher}. */
export interface BatchSettings {
  /** Most decisions in one batch (one round trip, one transaction); PostgreSQL caches 64 subtransactions per backend. */
  readonly maxBatch: number;
  /** Most batches in flight at once, each on its own pooled connection. */
  readonly lanes: number;
}

/** Queued decisions per batch before the queue is split over several batches in flight. */
const DECISIONS_PER_LANE = 8;

/** The most decisions one batch may carry: PostgreSQL caches 64 subtransactions per backend. */
export const MAX_BATCH = 64;

/** The defaults: 32 decisions a batch, one batch in flight per two pooled connections (at least one). */
export function defaultBatchSettings(poolSize: number): BatchSettings {
  return { maxBatch: 32, lanes: Math.max(1, Math.floor(poolSize / 2)) };
}

/**
 * A batched decision asked without an instant of its own: its values are
 * made when the batch is sent, at the plane's clock then (never before `askedAtMs`), and the
 * server adds the time the batch waited for its tenant locks (see `quota_batch` in `migrations/`).
 * - `values(atMs)`: the decision's values at instant `atMs`;
 * - `at`, `month`, `day`: the indexes of that instant and of the period keys derived from it.
 */
export interface AppliedDecision {
  readonly askedAtMs: number;
  readonly applied: AppliedInstant;
  readonly values: (atMs: number) => SqlValues;
  readonly at: number;
  readonly month?: number;
  readonly day?: number;
}

// How a decision is named in a waited-too-long fault.
const DECISION_NAMES: Partial<Record<BatchedDecision, string>> = { admit: 'admission', settlePass: 'settle' };

interface Pending {
  readonly op: BatchedDecision;
  readonly values: SqlValues | AppliedDecision;
  /** The tenant, the first value: its lock is what the batch takes. */
  readonly tenant: string;
  readonly resolve: (row: unknown) => void;
  readonly reject: (error: unknown) => void;
}

type ItemAnswer =
  | { readonly ok: unknown }
  | { readonly error: { readonly code: string; readonly message: string; readonly detail?: string | null; readonly hint?: string | null } };

/**
 * Group commit for one PostgreSQL store instance: decisions
 * that arrive while earlier ones are in flight share one round trip, one `quota_batch` call that
 * runs each in its own subtransaction inside one transaction (see `quota_batch` in `migrations/`).
 *
 * - FIFO per tenant: decisions leave the queue in arrival order, at most `maxBatch` at a time; a
 *   batch goes out as soon as a lane is free (on the next event-loop turn, so calls made together
 *   travel together), so a lone caller waits for nobody. A decision whose tenant is in a batch
 *   still in flight waits for a later batch (that batch holds the tenant's lock until it commits).
 *   When the queue holds more than 8 decisions per free lane, it is split over several batches
 *   (all of a tenant's decisions in one), which commit side by side on their own connections and
 *   never queue behind one another's locks.
 * - A decision that raises in the database is rolled back alone; only its caller gets the error.
 * - Callers are answered only after the statement returned, that is after its transaction
 *   committed. If the batch fails as a whole, every caller in it is rejected with the same
 *   `STORE_UNAVAILABLE`, and nothing in it was acknowledged: when the server refused it (statement
 *   cancelled, commit refused) or it was never sent, nothing in it committed; when its reply never
 *   came (query timeout, connection lost mid-statement) it may all have committed, and the fault
 *   says the outcome is unknown (`details.outcome = 'unknown'`; see `PostgresConnection.decide`).
 */
export class PostgresBatcher {
  readonly #db: PostgresConnection;
  readonly #query: string;
  readonly #settings: BatchSettings;
  #queue: Pending[] = [];
  #inFlight = 0;
  #scheduled = false;
  readonly #busyTenants = new Set<string>();

  /** `query` is the `quota_batch` call with one `$1` jsonb parameter. */
  constructor(db: PostgresConnection, query: string, settings: BatchSettings) {
    this.#db = db;
    this.#query = query;
    this.#settings = settings;
  }

  /**
   * Queues one decision (`values` as the function takes them, or made when the batch is sent, see
   * {@link AppliedDecision}) and answers its row once committed. A decision sent with
   * `AppliedDecision` answers its row with `applied_at_ms`, the instant it was recorded at, or
   * rejects with `STORE_UNAVAILABLE` (`details.reason = 'waited-too-long'`) having written nothing.
   */
  decide<Row>(op: BatchedDecision, values: SqlValues | AppliedDecision): Promise<Row> {
    if (this.#db.isClosed) return Promise.reject(closedStoreError());
    return new Promise<Row>((resolve, reject) => {
      const tenant = ('askedAtMs' in values ? values.values(values.askedAtMs)[0] : values[0]) as string;
      this.#queue.push({ op, values, tenant, resolve: resolve as (row: unknown) => void, reject });
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
      const tenants = new Set(batch.map((pending) => pending.tenant));
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
      const tenant = pending.tenant;
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
    let answers: unknown;
    try {
      // Made when the statement is written to its connection (node-postgres calls `toPostgres` then,
      // after the pool handed one out), so a decision's instant is read as late as Node can read it.
      const items = { toPostgres: () => JSON.stringify(batch.map(itemOf)) };
      const rows = await this.#db.decide<{ answers: unknown }>(this.#query, [items], 'batch');
      answers = rows[0]?.answers;
    } catch (error) {
      const fault = error instanceof QuotaError && error.code === 'STORE_UNAVAILABLE' ? error : batchFailedError(error);
      for (const pending of batch) pending.reject(fault);
      return;
    }
    if (!Array.isArray(answers) || answers.length !== batch.length) {
      const fault = decisionMismatch('batch', `answered ${Array.isArray(answers) ? answers.length : 'no'} results for ${batch.length} decisions`);
      for (const pending of batch) pending.reject(fault);
      return;
    }
    batch.forEach((pending, index) => {
      const answer = answers[index] as ItemAnswer;
      if ('error' in answer) {
        const { code, message, detail, hint } = answer.error;
        if (code === WAITED_TOO_LONG) {
          pending.reject(waitedTooLong(DECISION_NAMES[pending.op] ?? pending.op, Number(detail), Number(hint)));
          return;
        }
        // The detail and hint carry what a raised refusal names (quota_require_fits), as a direct call's error does.
        pending.reject(toQuotaError(Object.assign(new Error(message), { code, detail: detail ?? undefined, hint: hint ?? undefined })));
      } else {
        pending.resolve(answer.ok);
      }
    });
  }
}

/** The SQLSTATE `quota_batch` raises for a decision that waited past its bound. */
const WAITED_TOO_LONG = 'QPW01';

// One item of `quota_batch`'s argument; an applied decision is stamped now (see AppliedDecision).
function itemOf(pending: Pending): { op: BatchedDecision; args: SqlValues; wait?: Record<string, number> } {
  const values = pending.values;
  if (!('askedAtMs' in values)) return { op: pending.op, args: values };
  // A clock that throws or answers no instant must not fail the other decisions of the batch: this
  // one is then decided at the instant it was asked (the server still adds its lock wait).
  let nowMs: number;
  try {
    nowMs = values.applied.nowMs();
  } catch {
    nowMs = values.askedAtMs;
  }
  // An instant beyond MAX_INSTANT_MS is no instant either: quota_batch would refuse it for the whole batch.
  const isInstant = Number.isSafeInteger(nowMs) && nowMs >= 0 && nowMs <= MAX_INSTANT_MS;
  const sentAtMs = isInstant ? Math.max(values.askedAtMs, nowMs) : values.askedAtMs;
  const wait: Record<string, number> = { at: values.at, askedMs: values.askedAtMs, maxMs: values.applied.maxWaitMs };
  if (values.month !== undefined) wait.month = values.month;
  if (values.day !== undefined) wait.day = values.day;
  return { op: pending.op, args: values.values(sentAtMs), wait };
}
