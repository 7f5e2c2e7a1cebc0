import type { AdmitRequest, RunStatus } from './types.js';

/**
 * A waiter whose admission was granted and not yet collected: its own lease (while its caller is
 * away), the lease of the pass 1 its grant opened, and its run's status (`null` when missing).
 */
export interface GrantedWaiter {
  readonly waiterLeaseExpiresAtMs: number;
  readonly passLeaseExpiresAtMs: number | null;
  readonly runStatus: RunStatus | null;
}

/** A waiter's place in its tenant's queue: `seq` orders the queue (first come, first served). */
export interface WaiterPlace {
  readonly run: string;
  readonly seq: number;
  readonly state: 'waiting' | 'granted' | 'refused';
  readonly enqueuedAtMs: number;
  readonly leaseExpiresAtMs: number;
}

/** A waiter still waiting, with the admission it asked for, rebuilt at an instant (`STORE_CORRUPT` when unreadable). */
export interface WaitingEntry {
  readonly run: string;
  readonly seq: number;
  readonly leaseExpiresAtMs: number;
  requestAt(atMs: number): AdmitRequest;
}

/** What the waiting decisions read and write of one tenant's queue. Each method stores or returns facts. */
export interface WaiterGrantBooks {
  /** The waiter of `run` in state `granted`, or `null` when there is none. */
  grantedWaiter(run: string): GrantedWaiter | null;
  /** The waiter of `run` stands again in its place, `waiting`, undecided, its lease at `leaseExpiresAtMs`. */
  requeueWaiter(run: string, leaseExpiresAtMs: number): void;
  /** Erases a run that never started: its slot, hold, passes and registry row. */
  eraseRun(run: string): void;
  /** The first waiter still `waiting` after `afterSeq` in queue order, or `null`. */
  nextWaiting(afterSeq: number): WaitingEntry | null;
  /** The waiter of `run`, or `null`. */
  waiter(run: string): WaiterPlace | null;
  /** Puts `request` at the back of the queue, `waiting` since `atMs`, until `untilMs`, its lease at `leaseExpiresAtMs`. */
  enqueueWaiter(request: AdmitRequest, atMs: number, untilMs: number, leaseExpiresAtMs: number): void;
  /** Marks the waiter of `run` decided (`granted` or `refused`) at `atMs`. */
  decideWaiter(run: string, state: 'granted' | 'refused', atMs: number): void;
  /** Sets the lease of the waiter of `run`. */
  setWaiterLease(run: string, leaseExpiresAtMs: number): void;
  /** Deletes the waiter of `run`. */
  deleteWaiter(run: string): void;
  /** How many live waiters (`waiting`, lease after `atMs`) stand before `seq`. */
  waitersAhead(seq: number, atMs: number): number;
  /** The waiters whose lease lapsed at `atMs`, in queue order. */
  lapsedWaiters(atMs: number): readonly { readonly run: string; readonly state: string }[];
  /** The whole row of the waiter of `run`, to put back as it was with {@link restoreWaiter}. */
  keepWaiter(run: string): unknown;
  /** Puts back a waiter row {@link keepWaiter} kept. */
  restoreWaiter(kept: unknown): void;
}

/** The plane-wide side of the queues: which tenants have live waiters, and the fair-turn clock of each. */
export interface WaitTurnBooks {
  /** The tenants with a live waiter at `atMs`, bytewise. */
  waitingTenants(atMs: number): readonly string[];
  /** The virtual time of `tenant` (`'*'`: the plane's own), 0 before its first grant. */
  turn(tenant: string): number;
  /** Sets the virtual time of `tenant` (`'*'`: the plane's own). */
  setTurn(tenant: string, vtime: number): void;
}
