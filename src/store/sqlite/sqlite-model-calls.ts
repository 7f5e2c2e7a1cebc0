import type { CallCeilings } from '../../core/call-ceilings.js';
import type { CallReservation } from '../../core/lifecycle/call-books.js';
import { callStandings, type SubjectStanding } from '../../core/lifecycle/call-standings.js';
import {
  decideAdjustCall,
  decideReleaseCall,
  decideReserveCall,
  expireDueCalls,
  type AdjustCallRequest,
  type CallEnded,
  type ReserveCallOutcome,
  type ReserveCallRequest,
} from '../../core/lifecycle/model-calls.js';
import type { CallMeterStore } from '../port/model-calls.js';
import { SqliteCallBooks } from './sqlite-call-books.js';
import type { SqliteConnection } from './sqlite-connection.js';

const UPSERT_CEILINGS = `INSERT INTO quota_call_ceilings (tenant, ceilings_json, updated_at_ms) VALUES (@tenant, @json, @atMs)
  ON CONFLICT (tenant) DO UPDATE SET ceilings_json = excluded.ceilings_json, updated_at_ms = excluded.updated_at_ms`;
const DELETE_CEILINGS = 'DELETE FROM quota_call_ceilings WHERE tenant = @tenant';

/**
 * The SQLite adapter of {@link CallMeterStore}: every decision is core's, run on the tenant's
 * {@link SqliteCallBooks} inside one `BEGIN IMMEDIATE` transaction, batched with the other writes of
 * its turn (one WAL sync for many), so it is exact across processes sharing the file.
 */
export class SqliteCallMeterStore implements CallMeterStore {
  readonly #conn: SqliteConnection;

  constructor(conn: SqliteConnection) {
    this.#conn = conn;
  }

  async callCeilings(tenant: string): Promise<CallCeilings | null> {
    return this.#conn.read(() => new SqliteCallBooks(this.#conn, tenant).callCeilings());
  }

  async setCallCeilings(tenant: string, ceilings: CallCeilings | null, atMs: number): Promise<void> {
    await this.#conn.write(() => {
      if (ceilings === null) this.#conn.run(DELETE_CEILINGS, { tenant });
      else this.#conn.run(UPSERT_CEILINGS, { tenant, json: JSON.stringify(ceilings), atMs });
    });
  }

  async reserveCall(tenant: string, request: ReserveCallRequest): Promise<ReserveCallOutcome> {
    return this.#conn.write(() => decided(new SqliteCallBooks(this.#conn, tenant), (books) => decideReserveCall(books, request)));
  }

  async adjustCall(tenant: string, request: AdjustCallRequest): Promise<CallEnded> {
    return this.#conn.write(() => decided(new SqliteCallBooks(this.#conn, tenant), (books) => decideAdjustCall(books, request)));
  }

  async releaseCall(tenant: string, request: { readonly callId: string; readonly atMs: number }): Promise<CallEnded> {
    return this.#conn.write(() => decided(new SqliteCallBooks(this.#conn, tenant), (books) => decideReleaseCall(books, request)));
  }

  async call(tenant: string, callId: string): Promise<CallReservation | null> {
    return this.#conn.read(() => new SqliteCallBooks(this.#conn, tenant).reservation(callId));
  }

  async openCalls(tenant: string, limit: number): Promise<CallReservation[]> {
    return this.#conn.read(() => new SqliteCallBooks(this.#conn, tenant).openReservations(limit));
  }

  async callStandings(tenant: string, atMs: number, limit: number): Promise<SubjectStanding[]> {
    return this.#conn.read(() => callStandings(new SqliteCallBooks(this.#conn, tenant), atMs, limit));
  }

  async expireCalls(tenant: string, atMs: number, limit: number): Promise<number> {
    return this.#conn.write(() => decided(new SqliteCallBooks(this.#conn, tenant), (books) => expireDueCalls(books, atMs, limit)));
  }
}

// Runs a decision on the books, then stores the meters it wrote (a decision that throws stores none).
function decided<T>(books: SqliteCallBooks, decide: (books: SqliteCallBooks) => T): T {
  const answer = decide(books);
  books.flush();
  return answer;
}
