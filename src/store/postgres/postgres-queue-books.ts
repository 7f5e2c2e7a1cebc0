import type { QueueBooks } from '../../core/lifecycle/waiting.js';
import { compareBytewise } from '../byte-order.js';
import type { PlaneCeiling } from '../../core/plane-ceiling.js';
import { FactsMissing, type BatchFacts } from './postgres-books-facts.js';
import { planeCeilingOf, PostgresTenantBooks } from './postgres-tenant-books.js';

/*
 * The waiting queues of the tenants a PostgreSQL batch holds (core/lifecycle/waiting.ts
 * `QueueBooks`), over the batch's loaded rows. A plane-wide round serves only the tenants whose
 * lock the batch holds or could take at once: a tenant busy in another transaction is passed over
 * this time, never waited for. Mirrors sqlite-queue-books.ts.
 */

/** The queues of the tenants a batch holds, and their fair turns, in the batch's transaction. */
export class PostgresQueueBooks implements QueueBooks {
  readonly #batch: BatchFacts;
  readonly #books = new Map<string, PostgresTenantBooks>();

  constructor(batch: BatchFacts) {
    this.#batch = batch;
  }

  tenant(tenant: string): PostgresTenantBooks {
    let books = this.#books.get(tenant);
    if (books === undefined) {
      books = new PostgresTenantBooks(this.#batch, tenant);
      this.#books.set(tenant, books);
    }
    return books;
  }

  planeCeiling(): PlaneCeiling | null {
    return planeCeilingOf(this.#batch);
  }

  waitingTenants(atMs: number): readonly string[] {
    const plane = this.#batch.plane;
    if (plane.waitingTenants === undefined) {
      plane.wantWaitingTenants = true;
      throw new FactsMissing();
    }
    // The tenants found waiting when the batch looked, and those whose queue it has read since.
    const candidates = new Set(plane.waitingTenants);
    for (const [tenant, facts] of this.#batch.tenants) if (facts.queueLoaded) candidates.add(tenant);
    // Every queue not read yet is asked for at once, not one load per tenant.
    const unread = [...candidates].filter((tenant) => this.#batch.of(tenant).queueLoaded === false);
    if (unread.length > 0) {
      for (const tenant of unread) this.#batch.of(tenant).want.queue = true;
      throw new FactsMissing();
    }
    return [...candidates].sort(compareBytewise).filter((tenant) => this.tenant(tenant).waitsAt(atMs));
  }

  turn(tenant: string): number {
    const turns = this.#batch.plane.turns;
    if (!turns.rows.has(tenant)) {
      this.#batch.plane.wantTurns.add(tenant);
      throw new FactsMissing();
    }
    return turns.rows.get(tenant)?.vtime ?? 0;
  }

  setTurn(tenant: string, vtime: number): void {
    this.turn(tenant);
    this.#batch.put(this.#batch.plane.turns, tenant, { vtime });
  }
}

