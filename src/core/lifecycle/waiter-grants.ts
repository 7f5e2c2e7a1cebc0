import type { TenantBooks } from './books.js';

/**
 * A waiter's grant whose lease lapsed at `atMs` before its caller collected it (the caller was away
 * longer than the lease: a long GC pause, a starved CPU): the grant is withdrawn whole (slot and
 * hold given back, its run and passes erased, as if never admitted) and the waiter stands again in
 * its own place in the queue, `waiting`, its lease at least `leaseExpiresAtMs`
 * (docs/design/rules.md#w18, #w19). Its caller is never told to settle a pass it never received.
 * Answers whether there was such a grant; the caller serves the queue afterwards.
 */
export function requeueLapsedGrant(books: TenantBooks, run: string, atMs: number, leaseExpiresAtMs: number): boolean {
  const grant = books.grantedWaiter(run);
  if (grant === null) return false;
  const lapsed =
    grant.runStatus === 'stranded' || (grant.runStatus === 'running' && grant.passLeaseExpiresAtMs !== null && grant.passLeaseExpiresAtMs <= atMs);
  if (!lapsed) return false;
  books.eraseRun(run);
  books.requeueWaiter(run, Math.max(grant.waiterLeaseExpiresAtMs, leaseExpiresAtMs));
  return true;
}
