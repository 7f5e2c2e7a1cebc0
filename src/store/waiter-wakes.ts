/**
 * How a store wakes the callers of waiting admissions: `subscribe` calls `listener`
 * with a tenant whenever a grant of that tenant may have been written (by this process at once;
 * by another instance as soon as the backend hears of it), or with `null` when a grant of any
 * tenant may have been missed (every waiter should look), and `pollMs()` says how often a waiting
 * caller must look anyway, because a wake can be missed (another process on a SQLite file, a lost
 * PostgreSQL `LISTEN` connection). `subscribe` answers the function that unsubscribes.
 */
export interface WaiterWakes {
  subscribe(listener: (tenant: string | null) => void): () => void;
  pollMs(): number;
}

/**
 * The in-process half every adapter uses: listeners of this store instance, woken synchronously
 * after the commit that wrote a grant. A listener that throws is ignored (a waiter that cannot be
 * woken still polls).
 */
export class LocalWaiterWakes implements WaiterWakes {
  readonly #listeners = new Set<(tenant: string | null) => void>();
  #pollMs: number;

  /** `pollMs`: how often a waiting caller looks without a wake, ms. */
  constructor(pollMs: number) {
    this.#pollMs = pollMs;
  }

  subscribe(listener: (tenant: string | null) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  pollMs(): number {
    return this.#pollMs;
  }

  /** Changes the poll interval (PostgreSQL shortens it while its `LISTEN` connection is down). */
  setPollMs(pollMs: number): void {
    this.#pollMs = pollMs;
  }

  /** Wakes every waiter of every tenant (a grant may have been missed). */
  wakeAll(): void {
    this.#notify(null);
  }

  /** Wakes every listener for `tenant`. */
  wake(tenant: string): void {
    this.#notify(tenant);
  }

  #notify(tenant: string | null): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener(tenant);
      } catch {
        // A listener's fault is its own; the others still wake.
      }
    }
  }
}
