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
  readonly note?: string | undefined;
}

/** What every section gets: how long each timed loop runs, and where to say what it is doing. */
export interface BenchContext {
  /** Wall time of each timed loop, ms (after a short warm-up). */
  readonly loopMs: number;
  /** The repository root. */
  readonly repoRoot: string;
  /** The conversation trace of the Azure LLM inference trace 2023, in data/azure-llm-2023/. */
  readonly conversationTrace: string;
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
