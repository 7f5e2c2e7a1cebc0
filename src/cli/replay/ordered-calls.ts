/**
 * Calls a replay has sent and not yet seen answered, whose answers are applied strictly in the
 * order the calls were sent, whatever order their promises settle in. A local store answers in
 * queue order anyway (group commit is FIFO), but the layers above it may add different numbers of
 * promise hops to different verbs; applying answers in send order keeps the replay's own books
 * (slots it holds, its peak) moving exactly as the store's did.
 *
 * The first fault nobody handled is kept and thrown by {@link OrderedCalls.drain}, so a store fault
 * stops the replay as it did when each call was awaited.
 */
export class OrderedCalls {
  #waiting: Entry[] = [];
  #head = 0;
  #calls: Promise<void>[] = [];
  #fault: { error: unknown } | null = null;

  /**
   * Sends nothing itself: `call` is already sent. `onAnswer` gets its answer once every earlier
   * call's answer was applied; `onFault`, if given, gets its fault at the same point and answers
   * whether the fault was expected (otherwise it stops the replay at the next drain).
   */
  add<T>(call: Promise<T>, onAnswer: (answer: T) => void, onFault?: (error: unknown) => boolean): void {
    const entry: Entry = { done: false, failed: false, value: undefined, onAnswer: onAnswer as (answer: unknown) => void, onFault };
    this.#waiting.push(entry);
    this.#calls.push(
      call.then(
        (value) => {
          entry.done = true;
          entry.value = value;
          this.#advance();
        },
        (error: unknown) => {
          entry.done = true;
          entry.failed = true;
          entry.value = error;
          this.#advance();
        },
      ),
    );
  }

  /** Waits until every call sent so far is answered and applied; throws the first unexpected fault. */
  async drain(): Promise<void> {
    while (this.#calls.length > 0) {
      const calls = this.#calls;
      this.#calls = [];
      await Promise.all(calls);
    }
    if (this.#fault !== null) throw this.#fault.error;
  }

  #advance(): void {
    while (this.#head < this.#waiting.length) {
      const entry = this.#waiting[this.#head] as Entry;
      if (!entry.done) return;
      this.#head += 1;
      try {
        if (!entry.failed) entry.onAnswer(entry.value);
        else if (entry.onFault?.(entry.value) !== true) throw entry.value;
      } catch (error) {
        this.#fault ??= { error };
      }
    }
    this.#waiting = [];
    this.#head = 0;
  }
}

interface Entry {
  done: boolean;
  failed: boolean;
  value: unknown;
  readonly onAnswer: (answer: unknown) => void;
  readonly onFault: ((error: unknown) => boolean) | undefined;
}
