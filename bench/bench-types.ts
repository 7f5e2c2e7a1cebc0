/**
 * One measured figure of `npm run bench`: `operations` done in `seconds` of wall time.
 * `commitsPerOperation` is how many write transactions (each one durable commit) one operation
 * takes, so figures with different shapes can be compared per commit as well.
 */
export interface BenchRow {
  readonly section: string;
  readonly name: string;
  readonly operations: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly commitsPerOperation: number | null;
  /**
   * Latency quantiles in ms of one call, where the section measures them; `of` names the call
   * (for an admission cycle, `admit` alone).
   */
  readonly latency?: { readonly of: string; readonly p50Ms: number; readonly p99Ms: number } | undefined;
  /** What one decision cost, where the section measured it (see {@link PerDecision}). */
  readonly perDecision?: PerDecision | undefined;
  readonly note?: string | undefined;
}

/**
 * Costs per decision (an admission cycle is two: admit and settle; a peer's `consume()` one),
 * summed over the timed slices of one contender. Each is null where it could not be measured.
 */
export interface PerDecision {
  /** CPU of the database server's processes (PostgreSQL), µs. */
  readonly serverCpuUs: number | null;
  /** Write-ahead log bytes: PostgreSQL's LSN advance, or what SQLite's writing thread wrote. */
  readonly walBytes: number | null;
  /** Statements executed: top-level ones (those a client sends, BEGIN and COMMIT included). */
  readonly statements: number | null;
  /** Statements including those run inside functions (PostgreSQL with pg_stat_statements). */
  readonly allStatements: number | null;
  /** CPU of this Node process (every thread), µs. */
  readonly nodeCpuUs: number | null;
}

/**
 * Monotone counters (CPU µs, bytes, statements …) read before and after each timed slice; a loop
 * adds each slice's differences to the contender that ran in it. Reading happens outside the timed
 * wall clock.
 */
export interface SliceMeter {
  read(): Promise<Readonly<Record<string, number>>>;
}

/** What every section gets: how long each timed loop runs, and where to say what it is doing. */
export interface BenchContext {
  /** Wall time of each timed loop, ms (after a short warm-up). */
  readonly loopMs: number;
  /** The repository root. */
  readonly repoRoot: string;
  /** The conversation trace of the Azure LLM inference trace 2023, in data/azure-llm-2023/. */
  readonly conversationTrace: string;
  /** `--quick`: sections may leave out their longer variants (fewer shapes) so one runs briefly. */
  readonly quick: boolean;
  /** Progress for people (stderr); never part of the figures. */
  log(line: string): void;
}

/**
 * A group of measurements on one backend. Sections are listed in `bench/sections.ts`; a section
 * sets up and removes everything it uses (files, servers) itself.
 */
export interface BenchSection {
  readonly name: string;
  run(context: BenchContext): Promise<BenchRow[]>;
}
