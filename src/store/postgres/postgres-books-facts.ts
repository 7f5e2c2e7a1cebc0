import type { eventJsonColumns } from '../event-rows.js';
import type { HaltRow } from '../halt-rows.js';

/*
 * The rows of the books a batch of PostgreSQL decisions has read, and what it changed, held in
 * memory while `core/` decides (postgres-tenant-books.ts). Rows keep their table's column names so
 * they go back to `quota_books_write` as they are. A table maps a key to its row, to `null` when
 * the key is known to have none, and has no entry for a key not read yet: reading one throws
 * `FactsMissing` after naming it in `want`, and the batch reads what is wanted and decides again.
 * Every change can be undone back to a mark, so a decision that throws (or misses a fact) leaves
 * nothing behind.
 */

/** A `quota_runs` row; `chain_json` as JSON text. */
export interface RunsRow {
  run_id: string;
  status: string;
  agent_name: string | null;
  agent_digest: string | null;
  chain_json: string | null;
  budget_json: string;
  width: number;
  admitted_at_ms: number;
  last_epoch: number;
  status_since_ms: number;
}

/** A `quota_passes` row. */
export interface PassRow {
  run_id: string;
  epoch: number;
  period: string;
  takes_slot: boolean;
  started_at_ms: number;
  lease_expires_at_ms: number;
  settled_at_ms: number | null;
  hold_tokens: number | null;
  hold_minor_units: number | null;
  receipt_tokens: number | null;
  receipt_minor_units: number | null;
  receipt_concludes: boolean | null;
}

/** A `quota_settled` row: a receipt of the port's `settle`. */
export interface SettledRow {
  run_id: string;
  epoch: number;
  period: string | null;
  tokens: number;
  minor_units: number;
  release_slot: boolean;
  concludes: boolean;
}

/** A `quota_running` row: a slot. */
export interface SlotRow {
  run_id: string;
  admitted_at_ms: number;
  agent_name: string | null;
}

/** A `quota_reserved` row: a hold. */
export interface HoldRow {
  run_id: string;
  period: string;
  day: string | null;
  agent_name: string | null;
  tokens: number;
  minor_units: number;
}

/** A `quota_spent` row (or `quota_agent_spent`, with `agent_name`): settled totals and hold sums of a period. */
export interface SpentRow {
  agent_name?: string;
  period: string;
  tokens: number;
  minor_units: number;
  held_tokens: number;
  held_minor_units: number;
}

/** A `quota_pruned` row: a tombstone. */
export interface PrunedRow {
  run_id: string;
  status: string;
  last_epoch: number;
  closed_at_ms: number;
  pruned_at_ms: number;
}

/** A `quota_rate_grants` row. */
export interface RateGrantRow {
  grant_ref: string;
  last_ordinal: number;
  last_at_ms: number;
}

/** A `quota_rate` row. */
export interface RateRow {
  grant_ref: string;
  ordinal: number;
  run_id: string;
  dispatch: string;
  reserved_at_ms: number;
}

/** A `quota_waiters` row: a waiting admission, its request as JSON text. */
export interface WaiterRow {
  run_id: string;
  seq: number;
  state: 'waiting' | 'granted' | 'refused';
  request_json: string;
  enqueued_at_ms: number;
  wait_until_ms: number;
  lease_expires_at_ms: number;
  decided_at_ms: number | null;
}

/** A `quota_audit` row. */
export interface AuditRowToWrite {
  seq: number;
  at_ms: number;
  actor: string;
  basis: string;
  action: string;
  subject: string;
  detail_json: string;
  prev_hash: string;
  hash: string;
}

/** Thrown by a read of a fact not loaded yet; the batch loads what `want` names and decides again. */
export class FactsMissing extends Error {
  constructor() {
    super('a fact of the books is not loaded yet');
  }
}

/** What a batch asks `quota_books_load` for, for one tenant (see migrations/0001_quotaplane.sql). */
export class TenantWant {
  base = false;
  audit = false;
  queue = false;
  readonly runs = new Set<string>();
  readonly agents = new Set<string>();
  readonly periods = new Set<string>();
  readonly agentPeriods = new Map<string, [string, string]>();
  readonly grants = new Set<string>();
  readonly rateKeys = new Map<string, [string, string, string]>();
  readonly rateOrdinals = new Map<string, [string, number]>();
  readonly rateAfter = new Map<string, [string, number]>();

  get empty(): boolean {
    return (
      !this.base &&
      !this.audit &&
      !this.queue &&
      this.runs.size + this.agents.size + this.periods.size + this.agentPeriods.size + this.grants.size === 0 &&
      this.rateKeys.size + this.rateOrdinals.size + this.rateAfter.size === 0
    );
  }

  /** The want as `quota_books_load` takes it: only what is asked for. */
  toJSON(): Record<string, unknown> {
    const json: Record<string, unknown> = {};
    if (this.base) json.base = true;
    if (this.audit) json.audit = true;
    if (this.queue) json.queue = true;
    const lists: [string, Iterable<unknown>][] = [
      ['runs', this.runs],
      ['agents', this.agents],
      ['periods', this.periods],
      ['agentPeriods', this.agentPeriods.values()],
      ['grants', this.grants],
      ['rateKeys', this.rateKeys.values()],
      ['rateOrdinals', this.rateOrdinals.values()],
      ['rateAfter', this.rateAfter.values()],
    ];
    for (const [name, values] of lists) {
      const list = [...values];
      if (list.length > 0) json[name] = list;
    }
    return json;
  }
}

/** A table of loaded rows: `null` for a key known to have no row; `dirty` names the keys changed. */
export class FactTable<Row> {
  readonly rows = new Map<string, Row | null>();
  readonly dirty = new Set<string>();
}

/**
 * The tenant-wide facts: slot count, stored quota and standing halts (as stored: decoded where a
 * decision reads them, so an unreadable one fails that decision alone), and whether a waiter waits.
 */
export interface TenantBase {
  running: number;
  readonly quotaJson: unknown;
  readonly haltRows: readonly HaltRow[];
  readonly waiting: boolean;
  /** Whether a waiter of the tenant holds a grant not yet collected. */
  readonly granted: boolean;
}

/** The loaded facts of one tenant and what the batch changed in them. */
export class TenantFacts {
  readonly tenant: string;
  base: TenantBase | undefined;
  baseDirty = false;
  readonly loadedRuns = new Set<string>();
  readonly runs = new FactTable<RunsRow>();
  readonly pruned = new FactTable<PrunedRow>();
  /** Keyed `run \0 epoch`. */
  readonly passes = new FactTable<PassRow>();
  /** Keyed `run \0 epoch`. */
  readonly settled = new FactTable<SettledRow>();
  readonly slots = new FactTable<SlotRow>();
  readonly holds = new FactTable<HoldRow>();
  /** Whether the whole queue is loaded into `waiters`. */
  queueLoaded = false;
  /** The tenant's queue, keyed by run; complete once `queueLoaded`. */
  readonly waiters = new FactTable<WaiterRow>();
  readonly agentFigures = new FactTable<{ running: number }>();
  readonly spent = new FactTable<SpentRow>();
  /** Keyed `agent \0 period`. */
  readonly agentSpent = new FactTable<SpentRow>();
  readonly rateGrants = new FactTable<RateGrantRow>();
  /** Keyed `grant \0 run \0 dispatch`: the instant the store recorded it at, `null` when it has not. */
  readonly rateKeys = new Map<string, number | null>();
  /** Keyed `grant \0 ordinal`: the recorded instant stored, `null` when none. */
  readonly rateOrdinals = new Map<string, number | null>();
  /** Keyed `grant \0 sinceMs`: the oldest stored ordinal after it, `null` when none. */
  readonly rateAfter = new Map<string, number | null>();
  /** Per grant, the highest floor this batch pruned at. */
  readonly ratePrunes = new Map<string, number>();
  /** Per grant, the dispatches this batch recorded, oldest first. */
  readonly rateRecorded = new Map<string, RateRow[]>();
  /** The newest audit row (`null`: none), once loaded under the audit lock. */
  auditHead: { seq: number; hash: string } | null | undefined;
  readonly auditAppended: AuditRowToWrite[] = [];
  /** The events decisions appended (event-rows.ts `eventColumns`), written last. */
  readonly eventsAppended: ReturnType<typeof eventJsonColumns>[] = [];
  want = new TenantWant();
  /** The books' version these rows were read at (`quota_book_versions`), once known. */
  version: number | undefined;
  /**
   * Set while decisions run on rows kept from an earlier batch (postgres-books-cache.ts): a run
   * not among them is taken to be new, named in `assumedNew`, and the write checks it still is.
   */
  speculative = false;
  readonly assumedNew = new Set<string>();
  /** Keyed as `rateKeys`: the dispatches decisions on kept rows took to be new. */
  readonly assumedNewRates = new Map<string, [string, string, string]>();

  constructor(tenant: string) {
    this.tenant = tenant;
  }
}

/** The store-wide facts of a batch: the plane ceiling and the plane-wide slot counts. */
export interface PlaneFacts {
  /** The stored ceiling as stored (`raw: null`: none), `undefined` until loaded. */
  ceiling: { readonly raw: unknown } | undefined;
  /**
   * The plane-wide halt's row as stored (`raw: null`: none), loaded with the ceiling under the
   * same lock, `undefined` until then (docs/design/rules.md#c52).
   */
  halt: { readonly raw: unknown } | undefined;
  /** Every tenant's slots as loaded (under the plane lock), `undefined` until then. */
  running: number | undefined;
  /** Per agent name, its slots across tenants as loaded. */
  readonly agents: Map<string, number>;
  /** Slots this batch took (+) and gave back (−), in all, and per agent name. */
  delta: number;
  readonly agentDelta: Map<string, number>;
  wantCeiling: boolean;
  wantRunning: boolean;
  readonly wantAgents: Set<string>;
  /** The fair-turn clocks of the waiting queues, keyed by tenant (`'*'`: the plane's). */
  readonly turns: FactTable<{ vtime: number }>;
  readonly wantTurns: Set<string>;
  /** The tenants with a waiting waiter whose lock this batch holds (taken if free), once loaded. */
  waitingTenants: readonly string[] | undefined;
  wantWaitingTenants: boolean;
}

/** The facts of one batch: its tenants', the plane's, and the undo log of every change. */
export class BatchFacts {
  readonly tenants = new Map<string, TenantFacts>();
  readonly plane: PlaneFacts = {
    ceiling: undefined,
    halt: undefined,
    running: undefined,
    agents: new Map(),
    delta: 0,
    agentDelta: new Map(),
    wantCeiling: false,
    wantRunning: false,
    wantAgents: new Set(),
    turns: new FactTable(),
    wantTurns: new Set(),
    waitingTenants: undefined,
    wantWaitingTenants: false,
  };
  /** The tenants whose admission lock this batch holds: only their books may be read. */
  readonly locked = new Set<string>();
  /** Per grant a decision of this batch made, the tenant it went to (their waiters are woken at commit). */
  readonly granted = new Set<string>();
  readonly #undo: (() => void)[] = [];

  /** The facts of `tenant`, created empty on first use. */
  of(tenant: string): TenantFacts {
    let facts = this.tenants.get(tenant);
    if (facts === undefined) {
      facts = new TenantFacts(tenant);
      this.tenants.set(tenant, facts);
    }
    return facts;
  }

  /** Whether any tenant or the plane wants a fact not loaded yet. */
  get wanting(): boolean {
    const plane = this.plane;
    if (plane.wantCeiling || plane.wantRunning || plane.wantAgents.size > 0 || plane.wantTurns.size > 0 || plane.wantWaitingTenants) return true;
    for (const facts of this.tenants.values()) if (!facts.want.empty) return true;
    return false;
  }

  /** Records a grant to `tenant`, undoably: its waiters are woken once the batch commits. */
  grant(tenant: string): void {
    if (this.granted.has(tenant)) return;
    this.granted.add(tenant);
    this.#undo.push(() => this.granted.delete(tenant));
  }

  /** A mark to undo back to. */
  mark(): number {
    return this.#undo.length;
  }

  /** Undoes every change made after `mark`, newest first. */
  undoTo(mark: number): void {
    while (this.#undo.length > mark) (this.#undo.pop() as () => void)();
  }

  /** Records how to undo a change about to be made. */
  onUndo(undo: () => void): void {
    this.#undo.push(undo);
  }

  /** Sets `key` of `table` to `row` (`null`: deleted), marking it dirty, undoably. */
  put<Row>(table: FactTable<Row>, key: string, row: Row | null): void {
    const had = table.rows.has(key);
    const previous = table.rows.get(key);
    const wasDirty = table.dirty.has(key);
    this.#undo.push(() => {
      if (had) table.rows.set(key, previous as Row | null);
      else table.rows.delete(key);
      if (!wasDirty) table.dirty.delete(key);
    });
    table.rows.set(key, row);
    table.dirty.add(key);
  }

  /** Sets a value in a plain map, undoably (`undefined` deletes). */
  set<K, V>(map: Map<K, V>, key: K, value: V | undefined): void {
    const had = map.has(key);
    const previous = map.get(key);
    this.#undo.push(() => {
      if (had) map.set(key, previous as V);
      else map.delete(key);
    });
    if (value === undefined) map.delete(key);
    else map.set(key, value);
  }
}
