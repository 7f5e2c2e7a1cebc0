import type {
  AdmitOutcome,
  AdmitRequest,
  DispatchOutcome,
  DispatchRequest,
  HeartbeatOutcome,
  HeartbeatRequest,
  ResumeOutcome,
  ResumeRequest,
  RunRecord,
  SettlePassOutcome,
  SettlePassRequest,
} from '../types.js';
import type { TenantScoped } from './tenant-scoped.js';

/**
 * The run lifecycle the plane builds on, one transaction each: admit a run, open its further
 * passes, renew a pass's lease, record its dispatches and settle each pass. Decided in
 * `core/lifecycle/` over the tenant's books. Covered by docs/design/rules.md#l1–#l27 (admission,
 * passes and settling, dispatches), #l42–#l48 (leases and subject halts), #a1–#a16 (admitting the
 * same work twice), #k3–#k14 (plane-wide and per-agent ceilings), #l90–#l94 (overruns, applied
 * instants) and #r3–#r5 (a pruned run id). Used by the plane's admit, resume, heartbeat, dispatch
 * and settle (plane/admit.ts, resume.ts, heartbeat.ts, dispatch.ts, settle.ts).
 */
export interface RunLifecycleStore extends TenantScoped {
  /** Admission as one transaction: halts → quota → hold formula → reserve → run and pass 1 recorded. */
  admit(request: AdmitRequest): Promise<AdmitOutcome>;
  /**
   * A new pass of an admitted run: next epoch, no slot, never gated by concurrency, spend or
   * workload halts, hold carried to the period of `atMs`, status `running`
   * (docs/design/rules.md#l15–#l17). A `stranded`, `paused` or `withheld` run resumes alike. Throws
   * `NOT_FOUND` for an unknown run, `CONFLICT` for a `concluded` or `released` one. In the same
   * transaction it reads the halts: when a `subject:` halt names a principal of the run's chain it
   * answers `Withheld` (naming the halt `coveringHalt` picks among those subject halts;
   * `core/lifecycle/run-rules.ts` `withheldBy`), opens no pass, carries nothing, and sets the status to
   * `withheld` (`statusSinceMs` = `atMs` unless already withheld) — the one write a `Withheld`
   * answer makes.
   */
  resume(request: ResumeRequest): Promise<ResumeOutcome>;
  /**
   * Ends a pass: its receipt derived from the pass row and applied as `settle` does. A newly
   * written receipt stamps the pass settled and, when it is the run's latest pass and the run is
   * not `released`, sets the status: `concluded` when concluding; otherwise `paused`, except that a
   * `withheld` run stays `withheld` (it is pausing for its halt). A late settle of a lapsed or
   * stranded pass is accepted like any other, once (its receipt is unique). With `by`, a newly
   * written receipt also appends, in the same transaction, the audit row `{ action: 'run.settle',
   * subject: run, by, atMs, detail: { epoch, period, spend: { tokens, minorUnits }, releaseSlot,
   * concludes } }`; an `already-settled` answer appends nothing. Throws `NOT_FOUND` for an unknown
   * pass, `CONFLICT` for a receipt with a different payload, and `CONFLICT` (`details.pruned`) for
   * a run whose records `pruneRuns` removed.
   */
  settlePass(request: SettlePassRequest): Promise<SettlePassOutcome>;
  /**
   * A run's dispatch, one transaction: `NOT_FOUND`/`CONFLICT` as `resume` for the run; with
   * `epoch`, the pass is fenced as `heartbeat` fences it; then the subject-halt check as `resume`
   * (`Withheld`, nothing counted, the run marked `withheld`); then, with `epoch`, the lease renewed
   * as `heartbeat` renews it (also when the rate answer below is a refusal: the pass is alive);
   * then `reserveRate` with the tenant's configured ceilings for the grant added, read in the
   * same transaction.
   */
  dispatch(request: DispatchRequest): Promise<DispatchOutcome>;
  /**
   * Renews pass `(run, epoch)`'s lease, one transaction, checked in order:
   * 1. `NOT_FOUND` for an unknown run or pass;
   * 2. `CONFLICT` when the run is `concluded` or `released`;
   * 3. `CONFLICT` when `epoch` is below the run's latest epoch (a newer pass exists:
   *    `details.latestEpoch` names it; this pass must stop and settle);
   * 4. `CONFLICT` when the pass is settled already, or the run is `stranded` (a sweep declared the
   *    pass dead: settle it with its real spend, then resume);
   * 5. `Withheld` as `resume` answers it (lease not renewed, run marked `withheld`);
   * 6. otherwise the lease becomes `max(current expiry, atMs + leaseMs)` (saturating), and a
   *    `withheld` run whose halt was lifted becomes `running` again.
   * A lease that lapsed but that no sweep acted on is renewed: only the sweep acts on a lapse.
   */
  heartbeat(request: HeartbeatRequest): Promise<HeartbeatOutcome>;
  /** One run as the registry knows it, or `null`. */
  getRun(run: string): Promise<RunRecord | null>;
}
