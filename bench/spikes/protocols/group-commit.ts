// Group commit as src/store/postgres/postgres-batcher.ts does it, without the store's error
// mapping: decisions queued while batches are in flight go in the next batch; a batch carries
// several tenants, all of one tenant's queued decisions in order, and never a tenant that a batch
// in flight already carries (it would wait for that batch's lock, or conflict with its write).

/** Sends one batch (at most `maxBatch` items, each with its tenant) and answers one result per item, in order. */
export type SendBatch<Item, Answer> = (batch: readonly Item[]) => Promise<readonly Answer[]>;

interface Pending<Item, Answer> {
  readonly item: Item;
  readonly tenant: string;
  readonly resolve: (answer: Answer) => void;
  readonly reject: (error: unknown) => void;
}

/** Queued decisions per free lane before the queue is split over several batches (the store's figure). */
const DECISIONS_PER_LANE = 8;

export class GroupCommit<Item extends { readonly tenant: string }, Answer> {
  #queue: Pending<Item, Answer>[] = [];
  #inFlight = 0;
  #scheduled = false;
  readonly #busy = new Set<string>();
  /** Batches sent and items they carried, for the report. */
  batches = 0;
  items = 0;

  constructor(
    private readonly send: SendBatch<Item, Answer>,
    private readonly lanes: number,
    private readonly maxBatch = 32,
  ) {}

  submit(item: Item): Promise<Answer> {
    return new Promise<Answer>((resolve, reject) => {
      this.#queue.push({ item, tenant: item.tenant, resolve, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.lanes) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#drain();
    });
  }

  #drain(): void {
    const free = this.lanes - this.#inFlight;
    if (free <= 0 || this.#queue.length === 0) return;
    for (const batch of this.#take(Math.min(free, Math.ceil(this.#queue.length / DECISIONS_PER_LANE)))) {
      const tenants = new Set(batch.map((pending) => pending.tenant));
      for (const tenant of tenants) this.#busy.add(tenant);
      this.#inFlight += 1;
      this.batches += 1;
      this.items += batch.length;
      void this.#sendOne(batch).finally(() => {
        for (const tenant of tenants) this.#busy.delete(tenant);
        this.#inFlight -= 1;
        if (this.#queue.length > 0) this.#schedule();
      });
    }
  }

  #take(lanes: number): Pending<Item, Answer>[][] {
    const batches: Pending<Item, Answer>[][] = [];
    const laneOf = new Map<string, number>();
    const kept: Pending<Item, Answer>[] = [];
    for (const pending of this.#queue) {
      let lane = laneOf.get(pending.tenant);
      if (lane === undefined && !this.#busy.has(pending.tenant)) {
        lane = laneOf.size % lanes;
        laneOf.set(pending.tenant, lane);
      }
      const batch = lane === undefined ? undefined : (batches[lane] ??= []);
      if (batch !== undefined && batch.length < this.maxBatch) batch.push(pending);
      else kept.push(pending);
    }
    this.#queue = kept;
    return batches.filter((batch) => batch.length > 0);
  }

  async #sendOne(batch: readonly Pending<Item, Answer>[]): Promise<void> {
    try {
      const answers = await this.send(batch.map((pending) => pending.item));
      batch.forEach((pending, index) => pending.resolve(answers[index] as Answer));
    } catch (error) {
      for (const pending of batch) pending.reject(error);
    }
  }
}
