import type { CallCeilings, CallUnit } from '../../core/call-ceilings.js';
import type { CallAmounts, CallMeter } from '../../core/call-meter.js';
import type { CallBooks, CallReservation } from '../../core/lifecycle/call-books.js';
import { compareBytewise } from '../byte-order.js';
import { decodeCallCeilings, decodeMeter, decodeReservation, decodeUsageTotals, meterParams, reservationParams, type MeterRow, type ReservationRow } from '../call-rows.js';
import type { PostgresCallQueries } from './postgres-call-queries.js';
import type { TransactionClient } from './postgres-connection.js';

/*
 * The PostgreSQL adapter of core's CallBooks. PostgreSQL answers asynchronously and core decides
 * synchronously, so a decision runs on facts loaded beforehand inside its transaction (under the
 * tenant's model-call lock, so they cannot change under it) and a buffer of its writes, as the
 * lifecycle books do (postgres-books-facts.ts). A read of a fact not loaded names it in `want`,
 * marks the attempt `short` and answers a stand-in (no row), so one attempt names every fact it
 * reaches rather than one; the caller (postgres-model-calls.ts) then drops whatever the attempt
 * answered or threw and its buffered writes, loads what it wanted in one statement and decides
 * again. Reads see the buffered writes, exactly as the statements would have left the rows.
 */

/** The facts a load asks for (the JSON document of `load` in postgres-call-queries.ts). */
export interface CallWant {
  tenant: string;
  /** The first this many meters in subject order. */
  allMeters: number;
  meters: string[];
  calls: string[];
  /** The first this many open reservations, earliest deadline first. */
  head: number;
  atOrBefore: { subject: string; atMs: number }[];
  reaching: { subject: string; unit: CallUnit; amount: number; afterMs: number }[];
}

/** A want of nothing but the tenant's ceilings. */
export function emptyWant(tenant: string): CallWant {
  return { tenant, allMeters: 0, meters: [], calls: [], head: 0, atOrBefore: [], reaching: [] };
}

interface LoadAnswer {
  readonly ceilings: unknown;
  readonly all_meters: (MeterRow & { subject: string })[];
  readonly meters: (MeterRow & { subject: string })[];
  readonly calls: ReservationRow[];
  readonly head: ReservationRow[];
  readonly at_or_before: { subject: string; atMs: number; row: { at_ms: number; tokens: unknown; requests: unknown; minor_units: unknown } | null }[];
  readonly reaching: { subject: string; unit: string; amount: number; afterMs: number; atMs: number | null }[];
}

const usageKey = (subject: string, atMs: number) => `${subject}\u0000${atMs}`;
const reachingKey = (subject: string, unit: string, amount: number, afterMs: number) => `${subject}\u0000${unit}\u0000${amount}\u0000${afterMs}`;
const byDeadline = (a: CallReservation, b: CallReservation) => a.deadlineMs - b.deadlineMs || compareBytewise(a.callId, b.callId);

/**
 * One tenant's model-call books over loaded facts and buffered writes. The facts stay across
 * attempts of one decision ({@link reset} drops only the writes); {@link load} adds what the last
 * attempt wanted, {@link flush} stores the writes of the attempt that succeeded.
 */
export class PostgresCallBooks implements CallBooks {
  readonly tenant: string;
  want: CallWant;

  // Facts: a map answers `null` for a key known to have no row, and has no entry for one not loaded.
  #ceilings: CallCeilings | null | undefined = undefined;
  readonly #meters = new Map<string, CallMeter | null>();
  /** Every meter of the tenant is loaded (`complete`), else those through subject `last`. */
  #meterPrefix: { complete: boolean; last: string | null; count: number } = { complete: false, last: null, count: 0 };
  readonly #calls = new Map<string, CallReservation | null>();
  #head: { rows: CallReservation[]; full: boolean; limit: number } | null = null;
  readonly #atOrBefore = new Map<string, { atMs: number; booked: CallAmounts } | null>();
  readonly #reaching = new Map<string, number | null>();

  // Writes of the current attempt, as the rows will stand once stored.
  #putMeters = new Map<string, CallMeter>();
  #putUsage = new Map<string, Map<number, CallAmounts>>();
  #usagePruned = new Map<string, number>();
  /** `null`: a reservation this attempt stored and then pruned. */
  #putCalls = new Map<string, CallReservation | null>();
  #closedPruned: number | null = null;
  #short = false;

  constructor(tenant: string, want: CallWant) {
    this.tenant = tenant;
    this.want = want;
  }

  /** Loads what {@link want} names (one statement) and clears it. */
  async load(tx: TransactionClient, q: PostgresCallQueries): Promise<void> {
    const [answer] = await tx.rows<LoadAnswer>(q.load, [JSON.stringify(this.want)]);
    if (answer === undefined) throw new Error('the model-call load answered no row');
    const tenant = this.tenant;
    if (this.#ceilings === undefined) this.#ceilings = answer.ceilings === null ? null : decodeCallCeilings(tenant, answer.ceilings);
    for (const row of [...answer.all_meters, ...answer.meters]) this.#meters.set(row.subject, decodeMeter(tenant, row));
    for (const subject of this.want.meters) if (!this.#meters.has(subject)) this.#meters.set(subject, null);
    if (this.want.allMeters > 0) {
      const complete = answer.all_meters.length < this.want.allMeters;
      if (complete || answer.all_meters.length > this.#meterPrefix.count) {
        this.#meterPrefix = { complete, last: answer.all_meters.at(-1)?.subject ?? null, count: answer.all_meters.length };
      }
    }
    for (const row of answer.calls) {
      const call = decodeReservation(tenant, row);
      this.#calls.set(call.callId, call);
    }
    for (const callId of this.want.calls) if (!this.#calls.has(callId)) this.#calls.set(callId, null);
    if (this.want.head > 0) {
      const rows = answer.head.map((row) => decodeReservation(tenant, row));
      this.#head = { rows, full: rows.length >= this.want.head, limit: this.want.head };
      for (const call of rows) this.#calls.set(call.callId, call);
    }
    for (const entry of answer.at_or_before) {
      this.#atOrBefore.set(usageKey(entry.subject, entry.atMs), entry.row === null ? null : { atMs: entry.row.at_ms, booked: decodeUsageTotals(tenant, entry.row) });
    }
    for (const entry of answer.reaching) this.#reaching.set(reachingKey(entry.subject, entry.unit, Number(entry.amount), entry.afterMs), entry.atMs);
    this.want = emptyWant(tenant);
  }

  /** True when the attempt read a fact not loaded: what it answered or threw does not count. */
  get short(): boolean {
    return this.#short;
  }

  /** Drops the writes of an attempt that did not finish; the loaded facts stay. */
  reset(): void {
    this.#short = false;
    this.#putMeters = new Map();
    this.#putUsage = new Map();
    this.#usagePruned = new Map();
    this.#putCalls = new Map();
    this.#closedPruned = null;
  }

  /**
   * Stores the buffered writes, deletions first (as the statements would have left the rows); the
   * reservations last, with the `COMMIT` when the transaction can close so (`tx.closing`).
   */
  async flush(tx: TransactionClient, q: PostgresCallQueries): Promise<void> {
    const tenant = this.tenant;
    if (this.#usagePruned.size > 0) await tx.run(q.pruneUsage, [tenant, [...this.#usagePruned.keys()], [...this.#usagePruned.values()]]);
    const usage = [...this.#putUsage].flatMap(([subject, rows]) => [...rows].map(([atMs, booked]) => ({ subject, atMs, booked })));
    if (usage.length > 0) {
      await tx.run(q.upsertUsage, [
        tenant,
        usage.map((row) => row.subject),
        usage.map((row) => row.atMs),
        usage.map((row) => row.booked.tokens),
        usage.map((row) => row.booked.requests),
        usage.map((row) => row.booked.minorUnits),
      ]);
    }
    if (this.#putMeters.size > 0) {
      const params = [...this.#putMeters].map(([subject, meter]) => meterParams(tenant, subject, meter));
      const column = (key: string) => params.map((row) => row[key] ?? null);
      await tx.run(q.upsertMeters, [
        tenant,
        column('subject'),
        ...['bookedTokens', 'bookedRequests', 'bookedMinorUnits', 'heldTokens', 'heldRequests', 'heldMinorUnits', 'latestAtMs', 'baseTokens', 'baseRequests', 'baseMinorUnits', 'prunedThroughMs'].map(column),
      ]);
    }
    if (this.#closedPruned !== null) await tx.run(q.pruneClosed, [tenant, this.#closedPruned]);
    const gone = [...this.#putCalls].filter(([, call]) => call === null).map(([callId]) => callId);
    if (gone.length > 0) await tx.run(q.deleteCalls, [tenant, gone]);
    const calls = [...this.#putCalls.values()].filter((call): call is CallReservation => call !== null);
    if (calls.length === 0) return;
    const json = JSON.stringify({ tenant, rows: calls.map(callRow) });
    if (tx.closing !== undefined) await tx.closing(q.upsertCalls, json);
    else await tx.run(q.upsertCalls, [json]);
  }

  // A fact not loaded: the attempt is short, and reads on with `standIn`.
  #missing<T>(standIn: T): T {
    this.#short = true;
    return standIn;
  }

  callCeilings(): CallCeilings | null {
    // Every load reads the ceilings.
    return this.#ceilings ?? null;
  }

  meterSubjects(limit: number): string[] {
    const prefix = this.#meterPrefix;
    const subjects = new Set<string>(this.#putMeters.keys());
    for (const [subject, meter] of this.#meters) if (meter !== null) subjects.add(subject);
    const known = [...subjects].filter((subject) => this.#inMeterPrefix(subject)).sort(compareBytewise);
    if (!prefix.complete && known.length < limit) {
      this.want.allMeters = Math.max(limit, prefix.count * 2);
      this.#missing(null);
    }
    return known.slice(0, limit);
  }

  meter(subject: string): CallMeter | null {
    const put = this.#putMeters.get(subject);
    if (put !== undefined) return put;
    const loaded = this.#meters.get(subject);
    if (loaded !== undefined) return loaded;
    if (this.#inMeterPrefix(subject)) return null;
    this.want.meters.push(subject);
    return this.#missing(null);
  }

  meters(subjects: readonly string[]): (CallMeter | null)[] {
    return subjects.map((subject) => this.meter(subject));
  }

  // Whether every meter of subjects up to this one was loaded (so one not loaded has none).
  #inMeterPrefix(subject: string): boolean {
    const prefix = this.#meterPrefix;
    return prefix.complete || (prefix.last !== null && compareBytewise(subject, prefix.last) <= 0);
  }

  bookedAtOrBefore(subject: string, atMs: number): CallAmounts | null {
    const prunedThrough = this.#usagePruned.get(subject) ?? Number.NEGATIVE_INFINITY;
    let best: { atMs: number; booked: CallAmounts } | null = null;
    if (atMs > prunedThrough) {
      const key = usageKey(subject, atMs);
      const loaded = this.#atOrBefore.get(key);
      if (loaded === undefined) {
        this.want.atOrBefore.push({ subject, atMs });
        this.#missing(null);
      }
      // A stored row at or before the prune is gone, and then so is every stored row up to atMs.
      if (loaded !== undefined && loaded !== null && loaded.atMs > prunedThrough) best = loaded;
    }
    for (const [at, booked] of this.#putUsage.get(subject) ?? []) {
      if (at <= atMs && (best === null || at >= best.atMs)) best = { atMs: at, booked };
    }
    return best?.booked ?? null;
  }

  firstReaching(subject: string, unit: CallUnit, amount: number, afterMs: number): number | null {
    // Rows at or before a prune are gone: the first stored one left is after both instants.
    const after = Math.max(afterMs, this.#usagePruned.get(subject) ?? Number.NEGATIVE_INFINITY);
    const key = reachingKey(subject, unit, amount, after);
    const loaded = this.#reaching.get(key);
    if (loaded === undefined) {
      this.want.reaching.push({ subject, unit, amount, afterMs: after });
      return this.#missing(null);
    }
    let first = loaded;
    const put = this.#putUsage.get(subject);
    // A stored row replaced by this attempt counts as it now stands.
    if (first !== null && put?.has(first) === true && put.get(first)![unit] < amount) first = null;
    for (const [at, booked] of put ?? []) {
      if (at > after && booked[unit] >= amount && (first === null || at < first)) first = at;
    }
    return first;
  }

  reservation(callId: string): CallReservation | null {
    const put = this.#putCalls.get(callId);
    if (put !== undefined) return put;
    const loaded = this.#calls.get(callId);
    if (loaded === undefined) {
      this.want.calls.push(callId);
      return this.#missing(null);
    }
    if (loaded !== null && this.#closedPruned !== null && loaded.status !== 'open' && loaded.closedAtMs !== null && loaded.closedAtMs <= this.#closedPruned) return null;
    return loaded;
  }

  dueReservations(atMs: number, limit: number): CallReservation[] {
    const { open, exact } = this.#openCalls();
    const due = open.filter((call) => call.deadlineMs <= atMs);
    const answer = due.slice(0, limit);
    // Exact when the answer is among the calls surely first, and no due call can follow it unseen.
    const whole = this.#head !== null && !this.#head.full;
    if (answer.length <= exact && (answer.length === limit || whole || exact > due.length)) return answer;
    this.#wantHead(limit + 1);
    return this.#missing(answer);
  }

  earliestDeadlineMs(subject: string): number | null {
    const { open, exact } = this.#openCalls();
    const first = open.findIndex((call) => call.subjects.includes(subject));
    const deadlineMs = first < 0 ? null : open[first]!.deadlineMs;
    // Exact when it is among the calls surely first, or every open call is loaded.
    if ((first >= 0 && first < exact) || (this.#head !== null && !this.#head.full)) return deadlineMs;
    this.#wantHead(open.length + 1);
    return this.#missing(deadlineMs);
  }

  // The open reservations as this attempt left them, by deadline; the first `exact` of them are
  // surely the first open ones of the tenant (any not loaded sort after the last loaded).
  #openCalls(): { open: CallReservation[]; exact: number } {
    const head = this.#head;
    if (head === null) return { open: [], exact: 0 };
    const open = new Map<string, CallReservation>();
    for (const row of head.rows) {
      const now = this.reservation(row.callId);
      if (now !== null && now.status === 'open') open.set(now.callId, now);
    }
    for (const [callId, call] of this.#putCalls) if (call !== null && call.status === 'open') open.set(callId, call);
    const sorted = [...open.values()].sort(byDeadline);
    const last = head.rows.at(-1);
    const exact = !head.full || last === undefined ? sorted.length : sorted.filter((call) => byDeadline(call, last) <= 0).length;
    return { open: sorted, exact };
  }

  #wantHead(atLeast: number): void {
    this.want.head = Math.max(atLeast, (this.#head?.limit ?? 0) * 2, 1);
  }

  putMeter(subject: string, meter: CallMeter): void {
    this.#putMeters.set(subject, meter);
  }

  putUsage(subject: string, atMs: number, booked: CallAmounts): void {
    let rows = this.#putUsage.get(subject);
    if (rows === undefined) this.#putUsage.set(subject, (rows = new Map()));
    rows.set(atMs, booked);
  }

  pruneUsage(subject: string, throughMs: number): void {
    this.#usagePruned.set(subject, Math.max(throughMs, this.#usagePruned.get(subject) ?? Number.NEGATIVE_INFINITY));
    const rows = this.#putUsage.get(subject);
    for (const at of [...(rows?.keys() ?? [])]) if (at <= throughMs) rows!.delete(at);
  }

  pruneClosedReservations(throughMs: number): void {
    this.#closedPruned = Math.max(throughMs, this.#closedPruned ?? Number.NEGATIVE_INFINITY);
    for (const [callId, call] of this.#putCalls) {
      if (call !== null && call.status !== 'open' && call.closedAtMs !== null && call.closedAtMs <= throughMs) this.#putCalls.set(callId, null);
    }
  }

  putReservation(reservation: CallReservation): void {
    this.#putCalls.set(reservation.callId, reservation);
  }
}

// A reservation as the row `upsertCalls` reads from JSON, named by its columns.
function callRow(call: CallReservation): Record<string, unknown> {
  const p = reservationParams('', call);
  return {
    call_id: p.callId,
    model: p.model,
    agent: p.agent,
    end_user: p.endUser,
    subjects_json: call.subjects,
    reserved_tokens: p.reservedTokens,
    reserved_requests: p.reservedRequests,
    reserved_minor_units: p.reservedMinorUnits,
    max_output_tokens: p.maxOutputTokens,
    at_ms: p.atMs,
    deadline_ms: p.deadlineMs,
    status: p.status,
    booked_tokens: p.bookedTokens,
    booked_requests: p.bookedRequests,
    booked_minor_units: p.bookedMinorUnits,
    estimated: call.estimated,
    closed_at_ms: p.closedAtMs,
  };
}
