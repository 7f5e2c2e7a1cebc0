import type { RunStatus } from './types.js';

/**
 * A waiter whose admission was granted and not yet collected: its own lease (while its caller is
 * away), the lease of the pass 1 its grant opened, and its run's status (`null` when missing).
 */
export interface GrantedWaiter {
  readonly waiterLeaseExpiresAtMs: number;
  readonly passLeaseExpiresAtMs: number | null;
  readonly runStatus: RunStatus | null;
}

/** What a lapsed grant's withdrawal reads and writes of the tenant's waiting queue. */
export interface WaiterGrantBooks {
  /** The waiter of `run` in state `granted`, or `null` when there is none. */
  grantedWaiter(run: string): GrantedWaiter | null;
  /** The waiter of `run` stands again in its place, `waiting`, its lease at `leaseExpiresAtMs`. */
  requeueWaiter(run: string, leaseExpiresAtMs: number): void;
  /** Erases a run that never started: its slot, hold, passes and registry row. */
  eraseRun(run: string): void;
}
