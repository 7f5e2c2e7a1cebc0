// The spike's rule, decided in TypeScript as core would: pure, synchronous, no clock (the period
// key comes in). A tenant has a ceiling of concurrent runs and a monthly token ceiling; `admit`
// takes a slot and holds tokens, `settle` drops the hold, counts the spend and gives the slot back,
// once per (run, epoch). Not quotaplane's rule set: just enough of it to measure the protocols.

/** One tenant's row: its limits and the current period's figures (tokens). */
export interface TenantFigures {
  readonly maxRuns: number;
  readonly ceilingTokens: number;
  /** The month the settled figure counts, `YYYY-MM` (UTC). */
  readonly periodKey: string;
  readonly running: number;
  readonly settledTokens: number;
  readonly heldTokens: number;
}

/** One run's row, as a settle needs it. */
export interface RunFacts {
  readonly epoch: number;
  readonly holdTokens: number;
  readonly settled: boolean;
}

/** A decision asked of a tenant. */
export type Decision =
  | { readonly kind: 'admit'; readonly tenant: string; readonly run: string; readonly holdTokens: number }
  | { readonly kind: 'settle'; readonly tenant: string; readonly run: string; readonly epoch: number; readonly spendTokens: number };

/** The answer: a grant, an idempotent replay, or a refusal. */
export type Verdict = 'admitted' | 'settled' | 'already-settled' | 'concurrency-limit' | 'period-ceiling' | 'unknown-run' | 'stale-epoch';

/** What a decision leaves: the tenant's figures and the run after it, and the row write it asks for. */
export interface Decided {
  readonly figures: TenantFigures;
  readonly run: RunFacts | undefined;
  readonly verdict: Verdict;
  readonly write: 'insert-run' | 'settle-run' | null;
}

/** The month key of an instant, `YYYY-MM` (UTC). */
export function periodKeyOf(atMs: number): string {
  return new Date(atMs).toISOString().slice(0, 7);
}

/** Decides one admit or settle on `figures` and `run` (the run's row, undefined when it has none) in period `periodKey`. */
export function decide(figures: TenantFigures, run: RunFacts | undefined, decision: Decision, periodKey: string): Decided {
  const unchanged = (verdict: Verdict): Decided => ({ figures, run, verdict, write: null });
  // A new month starts with nothing settled; holds stay until their runs settle.
  const current = figures.periodKey === periodKey ? figures : { ...figures, periodKey, settledTokens: 0 };
  if (decision.kind === 'admit') {
    if (current.running >= current.maxRuns) return unchanged('concurrency-limit');
    if (current.settledTokens + current.heldTokens + decision.holdTokens > current.ceilingTokens) return unchanged('period-ceiling');
    return {
      figures: { ...current, running: current.running + 1, heldTokens: current.heldTokens + decision.holdTokens },
      run: { epoch: 1, holdTokens: decision.holdTokens, settled: false },
      verdict: 'admitted',
      write: 'insert-run',
    };
  }
  if (run === undefined) return unchanged('unknown-run');
  if (run.epoch !== decision.epoch) return unchanged('stale-epoch');
  if (run.settled) return unchanged('already-settled');
  return {
    figures: {
      ...current,
      running: current.running - 1,
      heldTokens: current.heldTokens - run.holdTokens,
      settledTokens: current.settledTokens + decision.spendTokens,
    },
    run: { ...run, settled: true },
    verdict: 'settled',
    write: 'settle-run',
  };
}
