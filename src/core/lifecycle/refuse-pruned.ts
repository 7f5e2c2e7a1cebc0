import type { BooksReads } from './books.js';
import { prunedRunError } from './pruned.js';

/** Throws the pruned-run `CONFLICT` when a prune left a tombstone for `run`. */
export function refuseIfPruned(books: BooksReads, run: string, verb: string): void {
  const pruned = books.prunedRun(run);
  if (pruned !== null) throw prunedRunError(books.tenant, pruned, verb);
}
