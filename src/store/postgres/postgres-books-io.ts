import { QuotaError } from '../../core/errors.js';
import { compareBytewise } from '../byte-order.js';
import type { HaltRow } from '../halt-rows.js';
import type {
  BatchFacts,
  FactTable,
  HoldRow,
  PassRow,
  PrunedRow,
  RateGrantRow,
  RunsRow,
  SettledRow,
  SlotRow,
  SpentRow,
  TenantFacts,
  WaiterRow,
} from './postgres-books-facts.js';
import { TenantWant } from './postgres-books-facts.js';
import type { PostgresConnection, TransactionClient } from './postgres-connection.js';

/*
 * Reading and writing a batch's books on PostgreSQL: `loadFacts` sends what the facts want to
 * `quota_books_load` (taking the locks asked for first) and files the rows it answers;
 * `writeFacts` sends every changed row to `quota_books_write`. See migrations/0001_quotaplane.sql.
 */

const SEP = '\u0000';

/** The statements, for one quoted schema `s`. */
export function booksQueries(s: string) {
  return {
    load: `SELECT ${s}.quota_books_load($1::jsonb) AS facts`,
    write: `SELECT ${s}.quota_books_write_caught($1::jsonb) AS fault`,
    writeAlone: `SELECT ${s}.quota_books_write($1::jsonb) AS fault`,
    /**
     * Appends events (a JSON array of event-rows.ts `eventJsonColumns`), each unless its key is
     * there, under the events lock: a batch decided one by one appends its events so, last, and so
     * do the acts that run their own transaction (postgres-events.ts).
     */
    appendEvents: `SELECT ${s}.quota_events_append($1::jsonb)`,
  } as const;
}

/** The statements of {@link booksQueries}. */
export type BooksQueries = ReturnType<typeof booksQueries>;

/** The base facts as the server answers them. */
interface BaseAnswer {
  readonly running: number;
  readonly quota: unknown;
  readonly halts: HaltRow[];
  readonly waiting: boolean;
  readonly granted: boolean;
}

interface RunsAnswer {
  readonly runs?: (Omit<RunsRow, 'chain_json'> & { chain_json: unknown })[];
  readonly pruned?: PrunedRow[];
  readonly passes?: PassRow[];
  readonly settled?: SettledRow[];
  readonly slots?: SlotRow[];
  readonly holds?: HoldRow[];
}

interface TenantAnswer {
  readonly tenant: string;
  readonly base?: BaseAnswer;
  readonly runs?: RunsAnswer;
  readonly agents?: { agent_name: string; running: number }[];
  readonly periods?: SpentRow[];
  readonly agentPeriods?: (SpentRow & { agent_name: string })[];
  readonly grants?: RateGrantRow[];
  readonly rateKeys?: [string, string, string, number][];
  readonly rateOrdinals?: [string, number, number][];
  readonly rateAfter?: [string, number, number | null][];
  readonly audit?: { head: { seq: number; hash: string } | null };
  readonly queue?: WaiterRow[] | null;
}

interface FactsAnswer {
  readonly tenants: TenantAnswer[];
  readonly plane?: { ceiling: unknown; halt?: unknown };
  readonly planeRunning?: number;
  readonly planeAgents?: Record<string, number>;
  readonly turns?: Record<string, number> | null;
  readonly waitingTenants?: string[] | null;
  /** Per tenant locked by this load, the books' version its transaction holds. */
  readonly versions?: Record<string, number>;
}

/**
 * Options of a load: the admission locks to take first (sorted), whether to take the plane lock,
 * and whether the load opens its transaction (`tx.opening`: one round trip for `BEGIN` and it).
 */
export interface LoadLocks {
  readonly lock?: readonly string[];
  readonly planeLock?: boolean;
  readonly opens?: boolean;
}

// Files `value` under `key` unless the key is loaded already: what a batch loaded first is what it
// has been deciding on (and may have changed).
function file<Row>(table: FactTable<Row>, key: string, value: Row | null): void {
  if (!table.rows.has(key)) table.rows.set(key, value);
}

/** Loads every fact `batch` wants (taking `locks` first), and clears the wants. */
export async function loadFacts(tx: TransactionClient, q: BooksQueries, batch: BatchFacts, locks: LoadLocks = {}): Promise<void> {
  const plane = batch.plane;
  for (const tenant of locks.lock ?? []) batch.locked.add(tenant);
  const wanted = [...batch.tenants.values()].filter((facts) => !facts.want.empty);
  for (const facts of wanted) {
    // Only a tenant whose lock the batch holds is read: its rows cannot change until it commits.
    if (!batch.locked.has(facts.tenant)) throw new Error(`the books of tenant '${facts.tenant}' were read without its lock`);
  }
  const auditLock = wanted.filter((facts) => facts.want.audit).map((facts) => facts.tenant);
  const request = {
    lock: locks.lock ?? [],
    planeLock: locks.planeLock === true || plane.wantRunning || plane.wantAgents.size > 0 || plane.wantTurns.size > 0,
    auditLock,
    tenants: wanted.map((facts) => ({ tenant: facts.tenant, ...facts.want.toJSON() })),
    plane: plane.wantCeiling,
    planeRunning: plane.wantRunning,
    planeAgents: [...plane.wantAgents],
    turns: [...plane.wantTurns],
    waitingTenants: plane.wantWaitingTenants,
  };
  const json = JSON.stringify(request);
  const [row] =
    locks.opens === true && tx.opening !== undefined
      ? await tx.opening<{ facts: FactsAnswer }>(q.load, json)
      : await tx.rows<{ facts: FactsAnswer }>(q.load, [json]);
  const answer = row?.facts ?? { tenants: [] };
  for (const [tenant, version] of Object.entries(answer.versions ?? {})) batch.of(tenant).version = Number(version);
  wanted.forEach((facts, index) => {
    fileTenant(facts, answer.tenants[index] ?? { tenant: facts.tenant });
    facts.want = new TenantWant();
  });
  if (plane.wantCeiling) {
    plane.ceiling = { raw: answer.plane?.ceiling ?? null };
    plane.halt = { raw: answer.plane?.halt ?? null };
  }
  if (plane.wantRunning && plane.running === undefined) plane.running = Number(answer.planeRunning ?? 0);
  for (const agent of plane.wantAgents) if (!plane.agents.has(agent)) plane.agents.set(agent, Number(answer.planeAgents?.[agent] ?? 0));
  for (const tenant of plane.wantTurns) {
    const vtime = answer.turns?.[tenant];
    file(plane.turns, tenant, vtime === undefined ? null : { vtime: Number(vtime) });
  }
  if (plane.wantWaitingTenants && plane.waitingTenants === undefined) {
    plane.waitingTenants = answer.waitingTenants ?? [];
    for (const tenant of plane.waitingTenants) batch.locked.add(tenant);
  }
  plane.wantCeiling = false;
  plane.wantRunning = false;
  plane.wantAgents.clear();
  plane.wantTurns.clear();
  plane.wantWaitingTenants = false;
}

function fileTenant(facts: TenantFacts, answer: TenantAnswer): void {
  const want = facts.want;
  if (want.base && facts.base === undefined) {
    const base = answer.base as BaseAnswer;
    facts.base = { running: Number(base.running), quotaJson: base.quota ?? null, haltRows: base.halts, waiting: base.waiting, granted: base.granted };
  }
  if (want.runs.size > 0) fileRuns(facts, [...want.runs], answer.runs ?? {});
  for (const agent of want.agents) {
    const found = answer.agents?.find((row) => row.agent_name === agent);
    file(facts.agentFigures, agent, found === undefined ? null : { running: Number(found.running) });
  }
  for (const period of want.periods) file(facts.spent, period, spentRow(answer.periods?.find((row) => row.period === period)));
  for (const [key, [agent, period]] of want.agentPeriods) {
    file(facts.agentSpent, key, spentRow(answer.agentPeriods?.find((row) => row.agent_name === agent && row.period === period)));
  }
  for (const grant of want.grants) {
    const found = answer.grants?.find((row) => row.grant_ref === grant);
    file(facts.rateGrants, grant, found === undefined ? null : { grant_ref: grant, last_ordinal: Number(found.last_ordinal), last_at_ms: Number(found.last_at_ms) });
  }
  for (const [key, [grant, run, dispatch]] of want.rateKeys) {
    const found = answer.rateKeys?.find(([g, r, d]) => g === grant && r === run && d === dispatch);
    if (!facts.rateKeys.has(key)) facts.rateKeys.set(key, found === undefined ? null : Number(found[3]));
  }
  for (const [key, [grant, ordinal]] of want.rateOrdinals) {
    const found = answer.rateOrdinals?.find(([g, o]) => g === grant && Number(o) === ordinal);
    if (!facts.rateOrdinals.has(key)) facts.rateOrdinals.set(key, found === undefined ? null : Number(found[2]));
  }
  for (const [key, [grant, since]] of want.rateAfter) {
    const found = answer.rateAfter?.find(([g, s]) => g === grant && Number(s) === since);
    if (!facts.rateAfter.has(key)) facts.rateAfter.set(key, found === undefined || found[2] === null ? null : Number(found[2]));
  }
  if (want.audit && facts.auditHead === undefined) facts.auditHead = answer.audit?.head ?? null;
  if (want.queue && !facts.queueLoaded) {
    facts.queueLoaded = true;
    for (const waiter of answer.queue ?? []) {
      file(facts.waiters, waiter.run_id, {
        ...waiter,
        seq: Number(waiter.seq),
        enqueued_at_ms: Number(waiter.enqueued_at_ms),
        wait_until_ms: Number(waiter.wait_until_ms),
        lease_expires_at_ms: Number(waiter.lease_expires_at_ms),
        decided_at_ms: waiter.decided_at_ms === null ? null : Number(waiter.decided_at_ms),
      });
    }
  }
}

function spentRow(row: SpentRow | undefined): SpentRow | null {
  if (row === undefined) return null;
  const filed: SpentRow = {
    period: row.period,
    tokens: Number(row.tokens),
    minor_units: Number(row.minor_units),
    held_tokens: Number(row.held_tokens),
    held_minor_units: Number(row.held_minor_units),
  };
  if (row.agent_name !== undefined) filed.agent_name = row.agent_name;
  return filed;
}

function fileRuns(facts: TenantFacts, runs: readonly string[], answer: RunsAnswer): void {
  for (const run of runs) {
    if (facts.loadedRuns.has(run)) continue;
    facts.loadedRuns.add(run);
    const row = answer.runs?.find((candidate) => candidate.run_id === run);
    file(
      facts.runs,
      run,
      row === undefined ? null : { ...row, chain_json: row.chain_json === null || row.chain_json === undefined ? null : JSON.stringify(row.chain_json) },
    );
    file(facts.pruned, run, answer.pruned?.find((candidate) => candidate.run_id === run) ?? null);
    file(facts.slots, run, answer.slots?.find((candidate) => candidate.run_id === run) ?? null);
    file(facts.holds, run, answer.holds?.find((candidate) => candidate.run_id === run) ?? null);
    for (const pass of answer.passes ?? []) if (pass.run_id === run) file(facts.passes, run + SEP + pass.epoch, pass);
    for (const receipt of answer.settled ?? []) if (receipt.run_id === run) file(facts.settled, run + SEP + receipt.epoch, receipt);
  }
}

// The changed rows of `table`, each with its tenant: those to store, and the keys of those gone.
function changes<Row extends object>(
  tenant: string,
  table: FactTable<Row>,
  gone: (key: string) => Record<string, unknown>,
  stored: (row: Row) => object = (row) => row,
): { rows: Record<string, unknown>[]; gone: Record<string, unknown>[] } {
  const rows: Record<string, unknown>[] = [];
  const goneKeys: Record<string, unknown>[] = [];
  for (const key of table.dirty) {
    const row = table.rows.get(key) ?? null;
    if (row === null) goneKeys.push({ tenant, ...gone(key) });
    else rows.push({ tenant, ...stored(row) });
  }
  return { rows, gone: goneKeys };
}

function byRunEpoch(key: string): { run_id: string; epoch: number } {
  const cut = key.lastIndexOf(SEP);
  return { run_id: key.slice(0, cut), epoch: Number(key.slice(cut + 1)) };
}

/** The kinds of rows `quota_books_write` stores: to replace whole, or (`…Gone`) to delete by key. */
export const WRITTEN_ROWS = [
  'slots',
  'slotsGone',
  'holds',
  'holdsGone',
  'figures',
  'agentFigures',
  'spent',
  'agentSpent',
  'passes',
  'passesGone',
  'runs',
  'runsGone',
  'receipts',
  'ratePrunes',
  'rates',
  'rateGrants',
  'waiters',
  'waitersGone',
  'turns',
  'audit',
  'events',
  'notify',
] as const;

/** The rows `batch` changed, as `quota_books_write` takes them, or `null` when nothing changed. */
function changedRows(batch: BatchFacts): Partial<Record<(typeof WRITTEN_ROWS)[number], unknown[]>> | null {
  const out: Partial<Record<(typeof WRITTEN_ROWS)[number], unknown[]>> = {};
  const add = (name: (typeof WRITTEN_ROWS)[number], rows: readonly unknown[]): void => {
    if (rows.length > 0) (out[name] ??= []).push(...rows);
  };
  for (const facts of batch.tenants.values()) {
    const tenant = facts.tenant;
    const byRun = (key: string) => ({ run_id: key });
    const slots = changes(tenant, facts.slots, byRun);
    add('slots', slots.rows);
    add('slotsGone', slots.gone);
    const holds = changes(tenant, facts.holds, byRun);
    add('holds', holds.rows);
    add('holdsGone', holds.gone);
    if (facts.baseDirty && facts.base !== undefined) add('figures', [{ tenant, running: facts.base.running }]);
    add('agentFigures', [...facts.agentFigures.dirty].map((agent) => ({ tenant, agent_name: agent, running: facts.agentFigures.rows.get(agent)?.running ?? 0 })));
    add('spent', changes(tenant, facts.spent, () => ({})).rows);
    add('agentSpent', changes(tenant, facts.agentSpent, () => ({})).rows);
    const passes = changes(tenant, facts.passes, byRunEpoch);
    add('passes', passes.rows);
    add('passesGone', passes.gone);
    const runs = changes(tenant, facts.runs, byRun, (row) => ({ ...row, chain_json: row.chain_json === null ? null : JSON.parse(row.chain_json) }));
    add('runs', runs.rows);
    add('runsGone', runs.gone);
    add('receipts', changes(tenant, facts.settled, byRunEpoch).rows);
    add('ratePrunes', [...facts.ratePrunes].map(([grant, floor]) => ({ tenant, grant_ref: grant, floor_ms: floor })));
    add('rates', [...facts.rateRecorded.values()].flat().map((row) => ({ tenant, ...row })));
    add('rateGrants', changes(tenant, facts.rateGrants, () => ({})).rows);
    const waiters = changes(tenant, facts.waiters, byRun);
    add('waiters', waiters.rows);
    add('waitersGone', waiters.gone);
    add('audit', facts.auditAppended.map((row) => ({ tenant, ...row })));
    add('events', facts.eventsAppended);
  }
  const turns = batch.plane.turns;
  add('turns', [...turns.dirty].map((tenant) => ({ tenant, vtime: turns.rows.get(tenant)?.vtime ?? 0 })));
  add('notify', [...batch.granted]);
  return Object.keys(out).length === 0 ? null : out;
}

/** A write the server refused, as `quota_books_write` answers it (written: nothing). */
export interface WriteFault {
  readonly code: string;
  readonly message: string;
  readonly detail: string | null;
  readonly hint: string | null;
}

/**
 * What a write on kept rows (see {@link writeKeptFacts}) answers: written (`raised`: the versions
 * moved on by one; not when nothing changed), or not (stale, or refused by the server: nothing of
 * it committed).
 */
export type KeptWrite = { readonly written: true; readonly raised: boolean } | { readonly written: false };

/**
 * Writes every row `batch` changed, decided on rows kept from an earlier batch (postgres-books-
 * cache.ts), in one statement outside any transaction: written only if each tenant's books are
 * still at the version its rows were read at and the runs and dispatches taken to be new still
 * are. Answers `written: false` when they are not, or when the server refused the write: nothing
 * was written, and the batch is to be decided again under the locks. Throws when the reply never
 * came (the outcome is unknown). Nothing changed still checks the versions: a refusal decided on kept rows
 * is true only if they are still what the store holds.
 */
export async function writeKeptFacts(db: PostgresConnection, q: BooksQueries, batch: BatchFacts): Promise<KeptWrite> {
  const expect: { tenant: string; version: number | undefined }[] = [];
  const absent: { tenant: string; run_id: string }[] = [];
  const absentRates: { tenant: string; grant_ref: string; run_id: string; dispatch: string }[] = [];
  // Bytewise, the order a batch takes its tenants' locks in (the write raises each version).
  for (const facts of [...batch.tenants.values()].sort((a, b) => compareBytewise(a.tenant, b.tenant))) {
    expect.push({ tenant: facts.tenant, version: facts.version });
    for (const run of facts.assumedNew) absent.push({ tenant: facts.tenant, run_id: run });
    // A dispatch this batch records is checked by the insert itself (its key is unique): only
    // those it took to be new and did not record (refused) are looked up.
    const recorded = new Set([...facts.rateRecorded.values()].flat().map((row) => row.grant_ref + SEP + row.run_id + SEP + row.dispatch));
    for (const [key, [grant, run, dispatch]] of facts.assumedNewRates) {
      if (!recorded.has(key)) absentRates.push({ tenant: facts.tenant, grant_ref: grant, run_id: run, dispatch });
    }
  }
  const rows = changedRows(batch);
  const request: Record<string, unknown> = {
    ...rows,
    expect,
    expectPlane: batch.plane.ceiling?.raw ?? null,
    expectPlaneHalt: batch.plane.halt?.raw ?? null,
  };
  if (absent.length > 0) request.absent = absent;
  if (absentRates.length > 0) request.absentRates = absentRates;
  if (rows === null) request.readOnly = true;
  let answer: { stale: true } | null;
  try {
    const [row] = await db.decide<{ fault: { stale: true } | null }>(q.writeAlone, [JSON.stringify(request)], 'books-write');
    answer = row?.fault ?? null;
  } catch (error) {
    // Refused by the server (or never sent): nothing of it committed. A reply that never came
    // leaves the outcome unknown, and that is the caller's to hear.
    if (error instanceof QuotaError && error.details.outcome === 'unknown') throw error;
    return { written: false };
  }
  return answer === null ? { written: true, raised: rows !== null } : { written: false };
}

/**
 * Writes every row `batch` changed in one statement (nothing when nothing changed), and answers
 * `null`, or the fault the server refused the write with, having written none of it. With
 * `closes`, the write is the transaction's last statement and goes with its COMMIT
 * (`tx.closing`): one round trip.
 */
/**
 * Takes the events the decisions of `batch` appended out of it (a write then leaves them out),
 * for a caller that appends them itself, last.
 */
export function takeEvents(batch: BatchFacts): unknown[] {
  const taken: unknown[] = [];
  for (const facts of batch.tenants.values()) taken.push(...facts.eventsAppended.splice(0));
  return taken;
}

export async function writeFacts(tx: TransactionClient, q: BooksQueries, batch: BatchFacts, closes = false): Promise<WriteFault | null> {
  const rows = changedRows(batch);
  if (rows === null) return null;
  const json = JSON.stringify(rows);
  const [row] =
    closes && tx.closing !== undefined
      ? await tx.closing<{ fault: WriteFault | null }>(q.write, json)
      : await tx.rows<{ fault: WriteFault | null }>(q.write, [json]);
  return row?.fault ?? null;
}
