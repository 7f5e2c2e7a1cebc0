import type { CallCeilings, CallUnit } from '../../core/call-ceilings.js';
import type { CallAmounts, CallMeter } from '../../core/call-meter.js';
import type { CallBooks, CallReservation } from '../../core/lifecycle/call-books.js';
import {
  decodeCallCeilings,
  decodeMeter,
  decodeReservation,
  decodeUsageTotals,
  METER_COLUMNS,
  meterParams,
  RESERVATION_COLUMNS,
  reservationParams,
  USAGE_COLUMN,
  type MeterRow,
  type ReservationRow,
} from '../call-rows.js';
import type { SqliteConnection, SqlParams } from './sqlite-connection.js';

const SELECT_CEILINGS = 'SELECT ceilings_json FROM quota_call_ceilings WHERE tenant = @tenant';
const SELECT_SUBJECTS = 'SELECT subject FROM quota_call_meters WHERE tenant = @tenant ORDER BY subject LIMIT @limit';
const SELECT_METER = `SELECT ${METER_COLUMNS} FROM quota_call_meters WHERE tenant = @tenant AND subject = @subject`;
const selectMeters = (count: number) =>
  `SELECT subject, ${METER_COLUMNS} FROM quota_call_meters WHERE tenant = ? AND subject IN (${Array.from({ length: count }, () => '?').join(', ')})`;
// The named parameters of a meter row (meterParams), in column order after the tenant.
const METER_PARAMS = ['subject', 'bookedTokens', 'bookedRequests', 'bookedMinorUnits', 'heldTokens', 'heldRequests', 'heldMinorUnits', 'latestAtMs', 'baseTokens', 'baseRequests', 'baseMinorUnits', 'prunedThroughMs'] as const;
const upsertMeters = (rows: number) =>
  `INSERT OR REPLACE INTO quota_call_meters (tenant, subject, ${METER_COLUMNS}) VALUES ${Array.from({ length: rows }, () => `(?, ${METER_PARAMS.map(() => '?').join(', ')})`).join(', ')}`;
const SELECT_USAGE_AT_OR_BEFORE = `SELECT at_ms, tokens, requests, minor_units FROM quota_call_usage
  WHERE tenant = @tenant AND subject = @subject AND at_ms <= @atMs ORDER BY at_ms DESC LIMIT 1`;
const upsertUsage = (rows: number) =>
  `INSERT OR REPLACE INTO quota_call_usage (tenant, subject, at_ms, tokens, requests, minor_units) VALUES ${Array.from({ length: rows }, () => '(?, ?, ?, ?, ?, ?)').join(', ')}`;
const PRUNE_USAGE = 'DELETE FROM quota_call_usage WHERE tenant = @tenant AND subject = @subject AND at_ms <= @throughMs';
const PRUNE_CLOSED = "DELETE FROM quota_call_reservations WHERE tenant = @tenant AND status <> 'open' AND closed_at_ms <= @throughMs";
const FIRST_REACHING = Object.fromEntries(
  Object.entries(USAGE_COLUMN).map(([unit, column]) => [
    unit,
    `SELECT at_ms FROM quota_call_usage WHERE tenant = @tenant AND subject = @subject AND at_ms > @afterMs AND ${column} >= @amount ORDER BY at_ms LIMIT 1`,
  ]),
) as Record<CallUnit, string>;
const SELECT_RESERVATION = `SELECT ${RESERVATION_COLUMNS} FROM quota_call_reservations WHERE tenant = @tenant AND call_id = @callId`;
const SELECT_DUE = `SELECT ${RESERVATION_COLUMNS} FROM quota_call_reservations
  WHERE tenant = @tenant AND status = 'open' AND deadline_ms <= @atMs ORDER BY deadline_ms, call_id LIMIT @limit`;
// Whether any call is due: nearly always none, and one row read is cheaper than a list.
const ANY_DUE = "SELECT 1 AS due FROM quota_call_reservations WHERE tenant = @tenant AND status = 'open' AND deadline_ms <= @atMs LIMIT 1";
const SELECT_OPEN = `SELECT ${RESERVATION_COLUMNS} FROM quota_call_reservations
  WHERE tenant = @tenant AND status = 'open' ORDER BY deadline_ms, call_id LIMIT @limit`;
// The open calls of a tenant are few (each is one in flight), so this reads them by the open index.
const EARLIEST_DEADLINE = `SELECT min(deadline_ms) AS at_ms FROM quota_call_reservations
  WHERE tenant = @tenant AND status = 'open' AND EXISTS (SELECT 1 FROM json_each(subjects_json) WHERE value = @subject)`;
// A call that ends changes only these; an UPDATE leaves the row's other columns as they are.
const END_RESERVATION = `UPDATE quota_call_reservations SET status = @status, booked_tokens = @bookedTokens, booked_requests = @bookedRequests,
  booked_minor_units = @bookedMinorUnits, estimated = @estimated, closed_at_ms = @closedAtMs WHERE tenant = @tenant AND call_id = @callId`;
const UPSERT_RESERVATION = `INSERT OR REPLACE INTO quota_call_reservations (tenant, ${RESERVATION_COLUMNS}) VALUES (@tenant, @callId,
  @model, @agent, @endUser, @subjects, @reservedTokens, @reservedRequests, @reservedMinorUnits, @maxOutputTokens, @atMs,
  @deadlineMs, @status, @bookedTokens, @bookedRequests, @bookedMinorUnits, @estimated, @closedAtMs)`;

/**
 * The SQLite adapter of core's {@link CallBooks}: one statement per fact, inside the
 * `BEGIN IMMEDIATE` transaction (or read snapshot) the decision runs in.
 */
export class SqliteCallBooks implements CallBooks {
  readonly tenant: string;
  readonly #conn: SqliteConnection;
  // Meters and usage rows written by the decision, stored by {@link flush} in one statement each;
  // reads see them first. A subject's new usage rows are newer than every stored one (M12).
  readonly #meters = new Map<string, CallMeter>();
  readonly #usage = new Map<string, Map<number, CallAmounts>>();

  constructor(conn: SqliteConnection, tenant: string) {
    this.#conn = conn;
    this.tenant = tenant;
  }

  callCeilings(): CallCeilings | null {
    return this.#conn.cachedInWrite(`call-ceilings:${this.tenant}`, () => {
      const row = this.#conn.get<{ ceilings_json: string }>(SELECT_CEILINGS, { tenant: this.tenant });
      return row === undefined ? null : decodeCallCeilings(this.tenant, row.ceilings_json);
    });
  }

  meterSubjects(limit: number): string[] {
    return this.#conn.all<{ subject: string }>(SELECT_SUBJECTS, { tenant: this.tenant, limit }).map((row) => row.subject);
  }

  meter(subject: string): CallMeter | null {
    const written = this.#meters.get(subject);
    if (written !== undefined) return written;
    const row = this.#conn.get<MeterRow>(SELECT_METER, { tenant: this.tenant, subject });
    return row === undefined ? null : decodeMeter(this.tenant, row);
  }

  meters(subjects: readonly string[]): (CallMeter | null)[] {
    const unread = subjects.filter((subject) => !this.#meters.has(subject));
    const read = new Map<string, CallMeter>();
    if (unread.length > 0) {
      for (const row of this.#conn.allPositional<MeterRow & { subject: string }>(selectMeters(unread.length), [this.tenant, ...unread])) {
        read.set(row.subject, decodeMeter(this.tenant, row));
      }
    }
    return subjects.map((subject) => this.#meters.get(subject) ?? read.get(subject) ?? null);
  }

  bookedAtOrBefore(subject: string, atMs: number): CallAmounts | null {
    let newest: { atMs: number; booked: CallAmounts } | null = null;
    for (const [at, booked] of this.#usage.get(subject) ?? []) if (at <= atMs && (newest === null || at > newest.atMs)) newest = { atMs: at, booked };
    if (newest !== null) return newest.booked;
    const row = this.#conn.get<{ at_ms: number; tokens: unknown; requests: unknown; minor_units: unknown }>(SELECT_USAGE_AT_OR_BEFORE, { tenant: this.tenant, subject, atMs });
    return row === undefined ? null : decodeUsageTotals(this.tenant, row);
  }

  firstReaching(subject: string, unit: CallUnit, amount: number, afterMs: number): number | null {
    const row = this.#conn.get<{ at_ms: number }>(FIRST_REACHING[unit], { tenant: this.tenant, subject, afterMs, amount });
    if (row !== undefined) return row.at_ms;
    let first: number | null = null;
    for (const [at, booked] of this.#usage.get(subject) ?? []) if (at > afterMs && booked[unit] >= amount && (first === null || at < first)) first = at;
    return first;
  }

  reservation(callId: string): CallReservation | null {
    const row = this.#conn.get<ReservationRow>(SELECT_RESERVATION, { tenant: this.tenant, callId });
    return row === undefined ? null : decodeReservation(this.tenant, row);
  }

  dueReservations(atMs: number, limit: number): CallReservation[] {
    if (this.#conn.get(ANY_DUE, { tenant: this.tenant, atMs }) === undefined) return [];
    return this.#conn.all<ReservationRow>(SELECT_DUE, { tenant: this.tenant, atMs, limit }).map((row) => decodeReservation(this.tenant, row));
  }

  /** The tenant's open calls, earliest deadline first (a listing, not a decision's fact). */
  openReservations(limit: number): CallReservation[] {
    return this.#conn.all<ReservationRow>(SELECT_OPEN, { tenant: this.tenant, limit }).map((row) => decodeReservation(this.tenant, row));
  }

  earliestDeadlineMs(subject: string): number | null {
    return this.#conn.get<{ at_ms: number | null }>(EARLIEST_DEADLINE, { tenant: this.tenant, subject })?.at_ms ?? null;
  }

  putMeter(subject: string, meter: CallMeter): void {
    this.#meters.set(subject, meter);
  }

  /** Stores the usage rows and meters the decision wrote, one statement each; call once the decision answered. */
  flush(): void {
    const usage: (string | number)[] = [];
    for (const [subject, rows] of this.#usage) {
      for (const [atMs, booked] of rows) usage.push(this.tenant, subject, atMs, booked.tokens, booked.requests, booked.minorUnits);
    }
    if (usage.length > 0) this.#conn.runPositional(upsertUsage(usage.length / 6), usage);
    this.#usage.clear();
    if (this.#meters.size === 0) return;
    const values: (string | number | null)[] = [];
    for (const [subject, meter] of this.#meters) {
      const params = meterParams(this.tenant, subject, meter);
      values.push(this.tenant, ...METER_PARAMS.map((name) => params[name] ?? null));
    }
    this.#conn.runPositional(upsertMeters(this.#meters.size), values);
    this.#meters.clear();
  }

  putUsage(subject: string, atMs: number, booked: CallAmounts): void {
    let rows = this.#usage.get(subject);
    if (rows === undefined) this.#usage.set(subject, (rows = new Map()));
    rows.set(atMs, booked);
  }

  pruneUsage(subject: string, throughMs: number): void {
    this.#conn.run(PRUNE_USAGE, { tenant: this.tenant, subject, throughMs });
    const rows = this.#usage.get(subject);
    for (const at of [...(rows?.keys() ?? [])]) if (at <= throughMs) rows!.delete(at);
  }

  pruneClosedReservations(throughMs: number): void {
    this.#conn.run(PRUNE_CLOSED, { tenant: this.tenant, throughMs });
  }

  putReservation(reservation: CallReservation): void {
    const params = reservationParams(this.tenant, reservation);
    if (reservation.status === 'open') {
      this.#conn.run(UPSERT_RESERVATION, params);
      return;
    }
    // An ended call was reserved by an earlier decision: its row is there.
    const { tenant, callId, status, bookedTokens, bookedRequests, bookedMinorUnits, estimated, closedAtMs } = params;
    this.#conn.run(END_RESERVATION, { tenant, callId, status, bookedTokens, bookedRequests, bookedMinorUnits, estimated, closedAtMs } as SqlParams);
  }
}
