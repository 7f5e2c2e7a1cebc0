import pg from 'pg';

import { LocalWaiterWakes, type WaiterWakes } from '../waiter-wakes.js';

/**
 * The channel every PostgreSQL store's grants are announced on (`pg_notify` in the migration
 * files, by this literal name); the payload is `<quoted schema>:<tenant>`.
 */
export const WAITER_CHANNEL = 'quotaplane_waiters';

/** How often a waiting caller looks while the `LISTEN` connection is up (a wake may still be missed in a reconnect), ms. */
export const LISTENING_POLL_MS = 2_000;
/** How often a waiting caller looks while the `LISTEN` connection is down, ms: polling is the fallback. */
export const FALLBACK_POLL_MS = 100;
/** First and longest pause before re-establishing a lost `LISTEN` connection, ms (doubling). */
const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5_000;

/**
 * Wakes waiting admissions on PostgreSQL: one dedicated connection per store runs
 * `LISTEN quotaplane_waiters`; every grant (`quota_books_write`) notifies `<schema>:<tenant>` on
 * commit, so every instance's waiters of that tenant look at once. The connection is opened on the
 * first subscription (a store nobody waits on opens none). When it is lost it is re-established
 * with backoff, and meanwhile waiters poll every {@link FALLBACK_POLL_MS} ms; while it is up they
 * still look every {@link LISTENING_POLL_MS} ms, in case a notice fell between two connections.
 */
export class PostgresWaiterWakes implements WaiterWakes {
  readonly #local = new LocalWaiterWakes(FALLBACK_POLL_MS);
  readonly #url: string;
  readonly #prefix: string;
  #client: pg.Client | null = null;
  #started = false;
  #closed = false;
  #retryMs = FIRST_RETRY_MS;
  #timer: NodeJS.Timeout | null = null;

  /** `url`: the store's connection URL; `s`: its quoted schema name (the notices' prefix). */
  constructor(url: string, s: string) {
    this.#url = url;
    this.#prefix = `${s}:`;
  }

  subscribe(listener: (tenant: string | null) => void): () => void {
    if (!this.#started && !this.#closed) {
      this.#started = true;
      this.#connect();
    }
    return this.#local.subscribe(listener);
  }

  pollMs(): number {
    return this.#local.pollMs();
  }

  /** True while the `LISTEN` connection is established. */
  get listening(): boolean {
    return this.#local.pollMs() === LISTENING_POLL_MS;
  }

  /** Ends the `LISTEN` connection and stops re-establishing it. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = null;
    await client?.end().catch(() => undefined);
  }

  #connect(): void {
    if (this.#closed) return;
    const client = new pg.Client({ connectionString: this.#url, application_name: 'quotaplane-listen', keepAlive: true });
    this.#client = client;
    let lost = false;
    const onLost = (): void => {
      if (lost) return;
      lost = true;
      this.#local.setPollMs(FALLBACK_POLL_MS);
      if (this.#client === client) this.#client = null;
      client.end().catch(() => undefined);
      this.#scheduleReconnect();
    };
    client.on('error', onLost);
    client.on('end', onLost);
    client.on('notification', (message) => {
      const payload = message.payload ?? '';
      if (message.channel === WAITER_CHANNEL && payload.startsWith(this.#prefix)) this.#local.wake(payload.slice(this.#prefix.length));
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${WAITER_CHANNEL}`))
      .then(() => {
        if (lost || this.#closed) return;
        this.#retryMs = FIRST_RETRY_MS;
        this.#local.setPollMs(LISTENING_POLL_MS);
        // Grants written while nobody listened are found by the waiters' next look, now.
        this.#local.wakeAll();
      })
      .catch(onLost);
  }

  #scheduleReconnect(): void {
    if (this.#closed || this.#timer !== null) return;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, LAST_RETRY_MS);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#connect();
    }, delay);
    this.#timer.unref();
  }
}
