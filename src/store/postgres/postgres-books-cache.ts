import { TenantWant, type TenantFacts } from './postgres-books-facts.js';

/** Most tenants whose rows one store instance keeps (least recently decided dropped first). */
const MAX_TENANTS = 4096;

/** Most runs one store instance keeps across its tenants (a few kilobytes each, with their rows). */
const MAX_RUNS = 16_384;

/** Most runs one kept tenant may hold: past it, the oldest read are forgotten (read again when asked). */
const MAX_RUNS_PER_TENANT = 128;

/** Most dispatch keys, and most dispatch instants by ordinal, one kept tenant may hold. */
const MAX_RATE_FACTS_PER_TENANT = 1024;

const SEP = '\u0000';

/**
 * The rows of each tenant as this store instance's last committed batch left them, with the books'
 * version they stand at (migrations/0001_quotaplane.sql `quota_book_versions`), so that the next batch
 * of the tenant can decide without reading them again and write only if nobody else wrote since
 * (postgres-batcher.ts). Kept: the tenant-wide facts, its runs with their passes, receipts, slots
 * and holds, the agents' slot counts, the periods' figures, the rate counters, and the dispatch
 * keys and instants by ordinal read or recorded. Never kept: a tenant whose queue holds anyone (a
 * queue is read whole under the lock), the oldest dispatch after an instant, and the audit head.
 * The plane ceiling is kept too, when it bounds nothing: one that bounds makes a decision read
 * plane-wide counts under the plane lock, so no decision is made on kept rows then. The plane-wide
 * halt is kept with it, as read under the same lock.
 */
export class BooksCache {
  readonly #tenants = new Map<string, TenantFacts>();
  // The runs kept across tenants, counted when a tenant is kept and when it goes.
  #runs = 0;
  /**
   * The plane ceiling as stored (`null`: none) when the last batch read under the lock found one
   * that bounds nothing, else `undefined`: decisions on kept rows are made only under a plane that
   * bounds nothing (a bound is counted plane-wide, under the plane lock).
   */
  unboundedPlane: unknown = undefined;
  /**
   * The plane-wide halt's row as stored (`null`: none), read with the ceiling by the last batch
   * under the lock, else `undefined`. Decisions on kept rows read it, and their write is stored
   * only if it still stands as read (`expectPlaneHalt`; docs/design/rules.md#c52).
   */
  planeHalt: unknown = undefined;

  /** The kept rows of `tenant`, or `undefined`. They stay kept while a batch decides on them. */
  get(tenant: string): TenantFacts | undefined {
    return this.#tenants.get(tenant);
  }

  /** Forgets `tenant`'s rows: they may not be what the store holds. */
  drop(tenant: string): void {
    const kept = this.#tenants.get(tenant);
    if (kept === undefined) return;
    this.#tenants.delete(tenant);
    this.#runs -= kept.loadedRuns.size;
  }

  /**
   * Keeps `facts` as they stand after a committed batch, at version `version`: what the batch
   * changed is now stored, so nothing is dirty; what is never kept is cleared. A tenant that
   * cannot be kept is forgotten.
   */
  keep(facts: TenantFacts, version: number | undefined): void {
    const tenant = facts.tenant;
    this.drop(tenant);
    const base = facts.base;
    if (version === undefined || base === undefined || base.waiting || base.granted || facts.queueLoaded || facts.waiters.rows.size > 0) return;
    if (facts.loadedRuns.size > MAX_RUNS_PER_TENANT) forgetOldestRuns(facts, MAX_RUNS_PER_TENANT / 2);
    facts.version = version;
    facts.speculative = false;
    facts.assumedNew.clear();
    facts.assumedNewRates.clear();
    facts.baseDirty = false;
    for (const table of [facts.runs, facts.pruned, facts.passes, facts.settled, facts.slots, facts.holds, facts.agentFigures, facts.spent, facts.agentSpent, facts.rateGrants]) {
      table.dirty.clear();
    }
    keepRates(facts);
    facts.auditHead = undefined;
    facts.auditAppended.length = 0;
    facts.eventsAppended.length = 0;
    facts.want = new TenantWant();
    this.#tenants.set(tenant, facts);
    this.#runs += facts.loadedRuns.size;
    for (const oldest of this.#tenants.keys()) {
      if (this.#tenants.size <= MAX_TENANTS && this.#runs <= MAX_RUNS) break;
      this.drop(oldest);
    }
  }
}

// The rate facts as the batch left them stored: the dispatches it recorded join the known keys and
// ordinals, those its prunes removed leave them, and the "oldest ordinal after" answers (which any
// dispatch may change) go. Past the bound, the oldest ordinals go first (a window's boundary is
// among the newest) and the keys all at once (a key not kept is checked by the write).
function keepRates(facts: TenantFacts): void {
  for (const [grant, floorMs] of facts.ratePrunes) {
    for (const map of [facts.rateKeys, facts.rateOrdinals]) {
      for (const [key, atMs] of map) if (key.startsWith(grant + SEP) && atMs !== null && atMs <= floorMs) map.delete(key);
    }
  }
  for (const [grant, rows] of facts.rateRecorded) {
    for (const row of rows) {
      facts.rateKeys.set(grant + SEP + row.run_id + SEP + row.dispatch, row.reserved_at_ms);
      facts.rateOrdinals.set(grant + SEP + row.ordinal, row.reserved_at_ms);
    }
  }
  facts.rateAfter.clear();
  facts.ratePrunes.clear();
  facts.rateRecorded.clear();
  if (facts.rateKeys.size > MAX_RATE_FACTS_PER_TENANT) facts.rateKeys.clear();
  if (facts.rateOrdinals.size > MAX_RATE_FACTS_PER_TENANT) {
    for (const key of facts.rateOrdinals.keys()) {
      if (facts.rateOrdinals.size <= MAX_RATE_FACTS_PER_TENANT / 2) break;
      facts.rateOrdinals.delete(key);
    }
  }
}

// Forgets the rows of the runs read longest ago until `keep` remain: a decision about one of them
// takes it to be new, and the write finds it is not (the batch is then decided under the lock).
function forgetOldestRuns(facts: TenantFacts, keep: number): void {
  const gone = new Set<string>();
  for (const run of facts.loadedRuns) {
    if (facts.loadedRuns.size - gone.size <= keep) break;
    gone.add(run);
  }
  for (const run of gone) {
    facts.loadedRuns.delete(run);
    for (const table of [facts.runs, facts.pruned, facts.slots, facts.holds]) table.rows.delete(run);
  }
  for (const table of [facts.passes, facts.settled]) {
    for (const key of table.rows.keys()) if (gone.has(key.slice(0, key.lastIndexOf(SEP)))) table.rows.delete(key);
  }
}
