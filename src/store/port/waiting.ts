import type { AdmitRequest, AppliedInstant } from '../types.js';
import type { CancelOutcome, WaitOutcome, WaitQueue, WaiterSweep, WaitTerms } from '../waiters.js';
import type { TenantScoped } from './tenant-scoped.js';

/**
 * Admissions that wait for a slot, one transaction each: join the tenant's queue, come back for
 * the answer, give up, and the sweep and listing of the queue. Covered by
 * docs/design/rules.md#w1–#w19. Used by the plane's waiting admission (plane/wait-admission.ts),
 * the sweep (`sweepWaiters`) and usage (`waitQueue`).
 *
 * `applied` (on `cancelWaiter`, `sweepWaiters` and `OperatorStore.sweepRun` as on the lifecycle
 * requests): the instant is read inside the transaction once the lock is held, so a grant written
 * there leases from when it was applied (see `AppliedInstant`). Every transaction that frees a
 * slot or raises a ceiling of a tenant (`settlePass` of a pass holding a slot, `releaseRun`,
 * `sweepRun`, `setQuota`, `cancelWaiter`, `sweepWaiters`) grants its waiters first come first
 * served in that same transaction; `admit` serves them before it decides. The raw contract
 * primitives (`settle`, `release`) carry no instant and leave the grant to the tenant's next
 * decision.
 */
export interface WaitingStore extends TenantScoped {
  /**
   * An admission that may wait: decided exactly as `admit` (the queue is served first, so no later
   * arrival takes a slot ahead of a waiter that fits); only a `TooManyRuns` refusal instead puts it
   * in the tenant's queue, first come first served, with a lease of `wait.leaseMs` from `atMs`,
   * answering `{ ok: false, waiting: true, run, position, enqueuedAtMs }`. A run id already waiting
   * is a collect (see `collectWaiter`).
   */
  admitOrWait(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome>;
  /**
   * The waiting caller comes back at `request.atMs` (the same admission it asked for): the queue is
   * served first; when still waiting and `atMs` is before `wait.untilMs`, its lease is renewed and
   * its place answered. Otherwise its queue row goes and the admission is answered in the same
   * transaction as the books stand: a grant written for it comes back as its pass (a retry answered
   * from the books; a grant is collected once), a waiter whose time is up gets the `TooManyRuns`
   * refusal decided now with `queuePosition` and `waitedMs`, a waiter that something else now
   * refuses gets that refusal. A waiter the grant loop refused for a reason other than room hears
   * that reason (a halt, `Unbounded`, `SpentOut` judged with room left out), never a `TooManyRuns`
   * because a waiter behind it took the slot; if only room refuses it by now, it waits on in its
   * own place (or, its time up, gets `TooManyRuns` with that place; W15, W16). A grant whose lease
   * lapsed at `atMs` before this collect (its caller was away longer than the lease) is withdrawn
   * whole and the waiter stands again in its own place and is served afresh, so the caller hears a
   * fresh pass, its place or its refusal, never a `CONFLICT` about a pass it never received. With
   * `wait.keepPlace` (another caller of the same run waits on), a waiter whose time is up and whom
   * room still refuses gets that `TooManyRuns` and its place stays, waiting (W17).
   */
  collectWaiter(request: AdmitRequest, wait: WaitTerms): Promise<WaitOutcome>;
  /**
   * The caller of a waiting admission gave up (disconnected, cancelled): its waiting row goes; a
   * grant written but not collected is withdrawn (slot and hold given back, its run and pass
   * erased) and the room goes to the next waiters in the same transaction.
   */
  cancelWaiter(request: { run: string; atMs: number; applied?: AppliedInstant }): Promise<CancelOutcome>;
  /**
   * The sweep of the queue at `atMs`: waiters whose lease lapsed are removed, grants nobody
   * collected before their waiter's lease lapsed are withdrawn, and the room goes to the next
   * waiters.
   */
  sweepWaiters(request: { atMs: number; applied?: AppliedInstant }): Promise<WaiterSweep>;
  /** The queue at `atMs`: live waiters still waiting, when the oldest joined, grants not collected. Read-only. */
  waitQueue(request: { atMs: number }): Promise<WaitQueue>;
}
