import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { compiledEntry } from '../compiled-entry.js';
import type { FromWorker, RaceOp, RaceResult, ToWorker } from './race-protocol.js';

const WORKER = fileURLToPath(new URL('./race-worker.ts', import.meta.url));

/**
 * Separate OS processes, each with its own PostgreSQL store and pool, kept alive across
 * repetitions and commanded over IPC. {@link fire} is the barrier: every worker is armed with its
 * operations first, and only when all have acknowledged are they told to fire, back to back.
 */
export class RaceCluster {
  readonly #workers: ChildProcess[];
  readonly #inbox = new Map<ChildProcess, FromWorker[]>();
  readonly #waiting = new Map<ChildProcess, (message: FromWorker) => void>();

  private constructor(workers: ChildProcess[]) {
    this.#workers = workers;
    for (const worker of workers) {
      this.#inbox.set(worker, []);
      worker.on('message', (message: FromWorker) => {
        const waiter = this.#waiting.get(worker);
        if (waiter !== undefined) {
          this.#waiting.delete(worker);
          waiter(message);
        } else {
          this.#inbox.get(worker)?.push(message);
        }
      });
    }
  }

  /** Forks `count` workers and opens a store in each on `url`, schema `schema`. */
  static async start(count: number, url: string, schema: string): Promise<RaceCluster> {
    const compiled = await compiledEntry(WORKER);
    const workers = Array.from({ length: count }, () => fork(compiled, [], { execArgv: [], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    const cluster = new RaceCluster(workers);
    await cluster.#everyone({ type: 'open', url, schema }, 'opened');
    return cluster;
  }

  /** How many workers there are. */
  get size(): number {
    return this.#workers.length;
  }

  /**
   * Arms worker `i` with `opsPerWorker[i]`, waits until every worker is armed, then fires all of
   * them together; resolves with each worker's results, in the order of its operations.
   */
  async fire(opsPerWorker: readonly (readonly RaceOp[])[]): Promise<RaceResult[][]> {
    if (opsPerWorker.length !== this.#workers.length) throw new Error(`expected ops for ${this.#workers.length} workers`);
    await Promise.all(this.#workers.map((worker, i) => this.#ask(worker, { type: 'arm', ops: opsPerWorker[i] ?? [] }, 'armed')));
    const answers = this.#workers.map((worker) => this.#next(worker));
    for (const worker of this.#workers) this.#send(worker, { type: 'fire' });
    const messages = await Promise.all(answers);
    return messages.map((message) => {
      if (message.type !== 'results') throw new Error(`a worker answered ${JSON.stringify(message)}`);
      return [...message.results];
    });
  }

  /** Closes every worker's store and waits for the processes to exit; kills any that linger. */
  async close(): Promise<void> {
    await Promise.all(
      this.#workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.exitCode !== null || worker.signalCode !== null) return resolve();
            const timer = setTimeout(() => worker.kill('SIGKILL'), 10_000);
            worker.once('exit', () => {
              clearTimeout(timer);
              resolve();
            });
            if (worker.connected) this.#send(worker, { type: 'close' });
            else worker.kill('SIGKILL');
          }),
      ),
    );
  }

  async #everyone(message: ToWorker, expected: FromWorker['type']): Promise<void> {
    await Promise.all(this.#workers.map((worker) => this.#ask(worker, message, expected)));
  }

  async #ask(worker: ChildProcess, message: ToWorker, expected: FromWorker['type']): Promise<void> {
    const answer = this.#next(worker);
    this.#send(worker, message);
    const got = await answer;
    if (got.type !== expected) throw new Error(`a worker answered ${JSON.stringify(got)} to ${message.type}`);
  }

  #send(worker: ChildProcess, message: ToWorker): void {
    worker.send(message);
  }

  #next(worker: ChildProcess): Promise<FromWorker> {
    const queued = this.#inbox.get(worker)?.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`a race worker exited (code ${code}) before answering`));
      worker.once('exit', onExit);
      this.#waiting.set(worker, (message) => {
        worker.removeListener('exit', onExit);
        resolve(message);
      });
    });
  }
}
