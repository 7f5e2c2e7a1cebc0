import type { CallCeilings } from '../../core/call-ceilings.js';
import type { CallReservation } from '../../core/lifecycle/call-books.js';
import { callStandings, type SubjectStanding } from '../../core/lifecycle/call-standings.js';
import {
  decideAdjustCall,
  decideReleaseCall,
  decideReserveCall,
  DUE_CALLS_PER_DECISION,
  expireDueCalls,
  type AdjustCallRequest,
  type CallEnded,
  type ReserveCallOutcome,
  type ReserveCallRequest,
} from '../../core/lifecycle/model-calls.js';
import { decodeCallCeilings, decodeReservation, type ReservationRow } from '../call-rows.js';
import type { CallMeterStore } from '../port/model-calls.js';
import { emptyWant, PostgresCallBooks, type CallWant } from './postgres-call-books.js';
import type { PostgresCallQueries } from './postgres-call-queries.js';
import type { PostgresConnection } from './postgres-connection.js';

/** Meters a decision loads up front, in subject order: all of a tenant's but the largest. */
const METERS_UP_FRONT = 64;
/** Loads one decision may need before it has every fact it reads (each loads all that the last attempt reached). */
const MAX_ATTEMPTS = 12;

/**
 * The PostgreSQL adapter of {@link CallMeterStore}: every decision is core's, run on the tenant's
 * {@link PostgresCallBooks} inside one transaction that first takes the tenant's model-call lock,
 * so decisions of one tenant serialise across every instance sharing the database. The facts are
 * loaded in one statement up front (and again for any the decision turned out to read), the
 * writes stored after it decided, and a `QuotaError` of core rolls everything back.
 */
export class PostgresCallMeterStore implements CallMeterStore {
  readonly #db: PostgresConnection;
  readonly #q: PostgresCallQueries;

  constructor(db: PostgresConnection, q: PostgresCallQueries) {
    this.#db = db;
    this.#q = q;
  }

  async callCeilings(tenant: string): Promise<CallCeilings | null> {
    const row = await this.#db.row<{ ceilings_json: unknown }>(this.#q.selectCeilings, [tenant]);
    return row === undefined ? null : decodeCallCeilings(tenant, row.ceilings_json);
  }

  async setCallCeilings(tenant: string, ceilings: CallCeilings | null, atMs: number): Promise<void> {
    if (ceilings === null) await this.#db.run(this.#q.deleteCeilings, [tenant]);
    else await this.#db.run(this.#q.upsertCeilings, [tenant, JSON.stringify(ceilings), atMs]);
  }

  async reserveCall(tenant: string, request: ReserveCallRequest): Promise<ReserveCallOutcome> {
    const want = { ...emptyWant(tenant), allMeters: METERS_UP_FRONT, calls: [request.callId], head: DUE_CALLS_PER_DECISION + 1 };
    return this.#decide(tenant, want, true, (books) => decideReserveCall(books, request));
  }

  async adjustCall(tenant: string, request: AdjustCallRequest): Promise<CallEnded> {
    const want = { ...emptyWant(tenant), allMeters: METERS_UP_FRONT, calls: [request.callId] };
    return this.#decide(tenant, want, true, (books) => decideAdjustCall(books, request));
  }

  async releaseCall(tenant: string, request: { readonly callId: string; readonly atMs: number }): Promise<CallEnded> {
    const want = { ...emptyWant(tenant), allMeters: METERS_UP_FRONT, calls: [request.callId] };
    return this.#decide(tenant, want, true, (books) => decideReleaseCall(books, request));
  }

  async call(tenant: string, callId: string): Promise<CallReservation | null> {
    const row = await this.#db.row<ReservationRow>(this.#q.selectCall, [tenant, callId]);
    return row === undefined ? null : decodeReservation(tenant, row);
  }

  async openCalls(tenant: string, limit: number): Promise<CallReservation[]> {
    const rows = await this.#db.rows<ReservationRow>(this.#q.selectOpen, [tenant, limit]);
    return rows.map((row) => decodeReservation(tenant, row));
  }

  async callStandings(tenant: string, atMs: number, limit: number): Promise<SubjectStanding[]> {
    const want = { ...emptyWant(tenant), allMeters: Math.max(limit, 1) };
    return this.#decide(tenant, want, false, (books) => callStandings(books, atMs, limit));
  }

  async expireCalls(tenant: string, atMs: number, limit: number): Promise<number> {
    const want = { ...emptyWant(tenant), allMeters: METERS_UP_FRONT, head: limit + 1 };
    return this.#decide(tenant, want, true, (books) => expireDueCalls(books, atMs, limit));
  }

  // One transaction under the tenant's model-call lock: load, decide, and load what the decision
  // missed and decide again until it has every fact; then store its writes (when `writes`) and commit.
  async #decide<T>(tenant: string, want: CallWant, writes: boolean, decision: (books: PostgresCallBooks) => T): Promise<T> {
    return this.#db.transaction(async (tx) => {
      // BEGIN and the lock in one round trip; the last write carries the COMMIT (PostgresCallBooks.flush).
      await tx.opening!(this.#q.lock, tenant);
      const books = new PostgresCallBooks(tenant, want);
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt += 1) {
        await books.load(tx, this.#q);
        let result: T;
        try {
          result = decision(books);
        } catch (error) {
          // A decision that read a stand-in may throw for it; only a whole attempt's error counts.
          if (!books.short) throw error;
        }
        if (!books.short) {
          if (writes) await books.flush(tx, this.#q);
          return result!;
        }
        books.reset();
      }
      throw new Error(`the model-call books of tenant '${tenant}' still missed facts after ${MAX_ATTEMPTS} loads`);
    }, { deferBegin: true });
  }
}
