import type { SettleInput } from '../../plane/plane.js';

/** A run admitted by the replay, waiting for its virtual end instant to settle. */
export interface PendingCompletion {
  readonly tenant: string;
  readonly run: string;
  readonly epoch: number;
  /** The billing period the admission answered; the settle accrues there. */
  readonly period: string;
  /** Virtual instant (Unix ms) at which the run finishes: arrival + 250 ms + 20 ms × generated tokens. */
  readonly endMs: number;
  readonly tokens: number;
  readonly minorUnits: number;
  /** Trace line, which breaks ties between runs ending at the same instant (file order). */
  readonly line: number;
}

/**
 * The settle that ends a pending run: its whole real spend, concluding it, at its virtual end
 * instant. The replay sends it once, and again when it checks that a retry is answered from the
 * receipt, so both must be the very same request.
 */
export function completionSettle(done: PendingCompletion): SettleInput {
  return {
    tenant: done.tenant,
    run: done.run,
    epoch: done.epoch,
    spend: { tokens: done.tokens, minorUnits: done.minorUnits },
    concludes: true,
    atMs: done.endMs,
  };
}

/** What orders the completion queue: the virtual end instant, then the trace line. */
export type CompletionOrder = Pick<PendingCompletion, 'endMs' | 'line'>;

/**
 * Min-heap of pending completions ordered by `endMs`, then trace line, so the replay settles runs
 * in virtual-time order and deterministically when several end at the same instant.
 */
export class CompletionQueue<Item extends CompletionOrder = PendingCompletion> {
  readonly #heap: Item[] = [];

  get size(): number {
    return this.#heap.length;
  }

  push(item: Item): void {
    const heap = this.#heap;
    heap.push(item);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (!before(item, heap[parent] as Item)) break;
      heap[index] = heap[parent] as Item;
      index = parent;
    }
    heap[index] = item;
  }

  /** The earliest completion without removing it, or `undefined` when empty. */
  peek(): Item | undefined {
    return this.#heap[0];
  }

  /** Removes and returns the earliest completion, or `undefined` when empty. */
  pop(): Item | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      const right = left + 1;
      let smallest = index;
      let smallestItem = last;
      if (left < heap.length && before(heap[left] as Item, smallestItem)) {
        smallest = left;
        smallestItem = heap[left] as Item;
      }
      if (right < heap.length && before(heap[right] as Item, smallestItem)) {
        smallest = right;
        smallestItem = heap[right] as Item;
      }
      if (smallest === index) break;
      heap[index] = smallestItem;
      index = smallest;
    }
    heap[index] = last;
    return top;
  }
}

function before(a: CompletionOrder, b: CompletionOrder): boolean {
  return a.endMs < b.endMs || (a.endMs === b.endMs && a.line < b.line);
}
