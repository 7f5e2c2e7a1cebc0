import { MAX_DECISION_WAIT_MS } from '../store/applied-instant.js';
import type { AdmitRequest, AdmitOutcome } from '../store/types.js';
import type { WaitingStore } from '../store/store.js';
import type { WaitOutcome, WaitTerms } from '../store/waiters.js';
import type { WaiterWakes } from '../store/waiter-wakes.js';
import type { PlaneContext } from './plane-context.js';
import { storeCall } from './store-call.js';

/** The longest a library caller may wait for a slot, ms (15 minutes). */
export const MAX_WAIT_MS = 15 * 60_000;

/**
 * How long a waiter's place lives without its caller coming back, ms (docs/design/rules.md#w8): a
 * caller whose process died loses its place (or its uncollected grant) this long after its last
 * look.
 */
export const WAITER_LEASE_MS = 10_000;

/** How often a waiting caller looks when its store offers no wakes at all, ms. */
const FALLBACK_POLL_MS = 100;

/**
 * A waiting admission (docs/design/rules.md#w1–#w9): `admitOrWait`, then, while the answer is
 * "waiting", sleep until a wake of the tenant, the store's poll interval, the end of the wait or
 * `signal`, and collect. The caller holds no lock and no connection while it sleeps; every look
 * renews its waiter's lease. Callers of this process waiting on the same run share its one place.
 * At or after `terms.untilMs` (by the plane's clock) the collect is final and answers the refusal
 * the store decides then, with the place and the time waited, or the grant written in that same
 * instant. When `signal` aborts, the waiter is cancelled (a grant not yet collected is given back)
 * unless another caller of this process still waits on the same run, and the signal's reason is
 * thrown (an `AbortError`). Likewise a caller whose wait runs out while another caller of the same
 * run waits on hears its refusal and leaves the place to the other (`keepPlace`).
 */
export async function waitForAdmission(
  context: PlaneContext,
  handle: WaitingStore,
  request: AdmitRequest,
  terms: WaitTerms,
  realWaitMs: number,
  signal: AbortSignal | undefined,
): Promise<AdmitOutcome> {
  const wakes = context.store.waiterWakes?.();
  const realDeadline = Date.now() + realWaitMs;
  const caller = joinCallers(context.store, handle.tenant, request.run);
  try {
    let outcome: WaitOutcome = await storeCall('admitOrWait', () => handle.admitOrWait(request, terms));
    while (isWaiting(outcome)) {
      const aborted = await sleepUntilWoken(handle.tenant, wakes, realDeadline, signal);
      if (aborted) {
        // Another caller of this process still waiting on the same run (a retry after a lost
        // answer) keeps the place: only the last one to give up cancels it.
        if (caller.leave() === 0) {
          // Read once the lock is held, so a grant it passes on leases from then; a cancel is never refused for waiting.
          const applied = request.applied === undefined ? {} : { applied: { nowMs: request.applied.nowMs, maxWaitMs: MAX_DECISION_WAIT_MS } };
          await storeCall('cancelWaiter', () => handle.cancelWaiter({ run: request.run, atMs: nowOf(context, request.atMs), ...applied }));
        }
        throw signal?.reason ?? new Error(`the waiting admission of run '${request.run}' was cancelled; it holds nothing`);
      }
      // The plane's clock decides the end; a clock that stands still (tests, replay) is moved to the
      // deadline once the real wait is over, so a wait always ends.
      const now = nowOf(context, request.atMs);
      const atMs = Date.now() >= realDeadline ? Math.max(now, terms.untilMs) : now;
      // A caller whose wait is over while another caller of this process still waits on the same
      // run leaves it the place: the store answers this one's refusal and keeps the place
      // (keepPlace matters only to the collect that ends this caller's wait).
      const collectTerms = caller.others() > 0 ? { ...terms, keepPlace: true } : terms;
      outcome = await storeCall('collectWaiter', () => handle.collectWaiter({ ...request, atMs }, collectTerms));
    }
    return outcome;
  } finally {
    caller.leave();
  }
}

/**
 * The callers of this process waiting on each (tenant, run) of a store: two callers may wait on
 * one run id (a retry after a lost answer reaches the same waiter row, and keeps its place), and a
 * cancel by one must not remove the place the other still waits in. Kept per store object, so
 * every plane over one store in this process shares it; other processes cannot see it (their
 * cancel removes the row, and a caller here then waits again at the back; see docs/concepts/waiting.md).
 */
const callersByStore = new WeakMap<object, Map<string, number>>();

function joinCallers(store: object, tenant: string, run: string): { leave(): number; others(): number } {
  let callers = callersByStore.get(store);
  if (callers === undefined) {
    callers = new Map();
    callersByStore.set(store, callers);
  }
  const counts = callers;
  const key = `${tenant}\u0000${run}`;
  counts.set(key, (counts.get(key) ?? 0) + 1);
  let left = false;
  // Answers how many callers of this run remain once this one has left (leaving twice counts once).
  return {
    // How many other callers of this run wait besides this one.
    others(): number {
      return (counts.get(key) ?? 0) - (left ? 0 : 1);
    },
    leave(): number {
      if (!left) {
        left = true;
        const remaining = (counts.get(key) ?? 1) - 1;
        if (remaining === 0) counts.delete(key);
        else counts.set(key, remaining);
      }
      return counts.get(key) ?? 0;
    },
  };
}

function isWaiting(outcome: WaitOutcome): outcome is Extract<WaitOutcome, { waiting: true }> {
  return !outcome.ok && 'waiting' in outcome;
}

function nowOf(context: PlaneContext, floorMs: number): number {
  return Math.max(floorMs, context.clock.nowMs());
}

// Resolves false on a wake of `tenant`, the poll interval or the deadline; true when `signal` aborts.
function sleepUntilWoken(
  tenant: string,
  wakes: WaiterWakes | undefined,
  realDeadline: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(true);
  const pollMs = wakes?.pollMs() ?? FALLBACK_POLL_MS;
  const sleepMs = Math.max(0, Math.min(pollMs, realDeadline - Date.now()));
  return new Promise<boolean>((resolve) => {
    let done = false;
    const finish = (aborted: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsubscribe?.();
      signal?.removeEventListener('abort', onAbort);
      resolve(aborted);
    };
    const onAbort = (): void => finish(true);
    const timer = setTimeout(() => finish(false), sleepMs);
    const unsubscribe = wakes?.subscribe((woken) => {
      if (woken === null || woken === tenant) finish(false);
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
