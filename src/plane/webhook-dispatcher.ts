import { Webhook } from 'standardwebhooks';
import { request } from 'undici';
import { ulid } from 'ulid';

import type { Clock } from '../core/clock.js';
import { invalidArgument } from '../core/errors.js';
import { webhookBody } from '../core/webhook-payload.js';
import { afterFailedAttempt, isDeliveredStatus, signingSecrets, type WebhookSecret } from '../core/webhook-retry.js';
import type { EventLogStore } from '../store/port/events.js';
import type { AttemptOutcome, ClaimedDelivery } from '../store/port/webhooks.js';
import type { QuotaStore } from '../store/store.js';
import { systemClock } from './system-clock.js';
import { webhookStoreOf } from './webhooks.js';
import { DEFAULT_WEBHOOK_POLL_MS } from './webhook-defaults.js';

export { DEFAULT_WEBHOOK_POLL_MS } from './webhook-defaults.js';
/** How long a claim stands, in ms: no other dispatcher attempts the delivery meanwhile (docs/design/rules.md#h7). */
export const DEFAULT_WEBHOOK_LEASE_MS = 30_000;
/** How long one attempt waits for the endpoint's answer, in ms; less than the lease. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 10_000;
/** Deliveries claimed at once by one dispatcher. */
export const DEFAULT_WEBHOOK_BATCH = 32;
/** The least time between the starts of two rounds a nudge (or a full batch) brings forward, in ms. */
export const WEBHOOK_NUDGE_GAP_MS = 25;
/** Events fanned out per transaction. */
const FAN_OUT_PAGE = 500;

/** One HTTP attempt: POST `body` with `headers` to `url`, giving up after `timeoutMs`. Answers the status, or throws. */
export type WebhookSend = (attempt: {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  readonly timeoutMs: number;
}) => Promise<{ readonly status: number }>;

/**
 * What one attempt came to, for metrics (`quotaplane_webhook_deliveries_total{outcome}`): `delivered`
 * (a 2xx), `failed_attempt` (tried again later) or `undeliverable` (its last attempt failed: now `failed`).
 */
export type AttemptMetric = 'delivered' | 'failed_attempt' | 'undeliverable';

/**
 * Options of {@link createDispatcher}.
 * - `store`: a store with webhooks (both built-in stores); `events`: where events are read
 *   (default the store's own event log).
 * - `clock`: instants of attempts and retries (default the system clock); `random`: uniform draws in
 *   [0, 1) for the backoff's jitter (default `Math.random`); `send`: one HTTP attempt (default undici).
 * - `pollMs` (default 250), `leaseMs` (30 000), `timeoutMs` (10 000, below `leaseMs`), `batch` (32).
 * - `onAttempt`: called after each recorded attempt; `onError`: a round that failed (the loop carries on).
 */
export interface DispatcherOptions {
  readonly store: QuotaStore;
  readonly events?: EventLogStore | undefined;
  readonly clock?: Clock | undefined;
  readonly random?: (() => number) | undefined;
  readonly send?: WebhookSend | undefined;
  readonly pollMs?: number | undefined;
  readonly leaseMs?: number | undefined;
  readonly timeoutMs?: number | undefined;
  readonly batch?: number | undefined;
  readonly onAttempt?: ((metric: AttemptMetric, delivery: ClaimedDelivery) => void) | undefined;
  readonly onError?: ((error: unknown) => void) | undefined;
}

/** What one round did: events fanned out into deliveries, and attempts made. */
export interface DispatchRound {
  readonly fannedOut: number;
  readonly attempted: number;
}

/**
 * Delivers events to webhook endpoints (docs/design/rules.md#h1–#h12). `start()` polls every
 * `pollMs` (and at once on `nudge()`); each round fans new events out into deliveries, claims the
 * due ones and sends them. `round()` runs one round by hand (tests drive virtual time with it).
 */
export interface Dispatcher {
  /**
   * One round: fan out, claim, send, record. Resolves when every attempt of it is recorded (an
   * attempt whose record failed goes to `onError`).
   */
  round(): Promise<DispatchRound>;
  /**
   * Starts polling; idempotent. The loop's rounds do not wait for their attempts (at most
   * 4 × `batch` in flight), so a slow endpoint never delays another's deliveries.
   */
  start(): void;
  /** Runs a round as soon as the one in flight ends. */
  nudge(): void;
  /** Stops polling and resolves once the round in flight and every attempt in flight have ended. */
  stop(): Promise<void>;
}

/** The `webhook-signature` header (docs/design/rules.md#h9): `v1,<base64>` per secret, space-separated. */
export function signatureHeader(secrets: readonly WebhookSecret[], id: string, atMs: number, body: string): string {
  const at = new Date(Math.floor(atMs / 1000) * 1000);
  return secrets.map((one) => new Webhook(one.secret).sign(id, at, body)).join(' ');
}

/** The headers of one attempt at `atMs` (docs/design/rules.md#h2): the event's id, the attempt's time in seconds, the signatures. */
export function webhookHeaders(secrets: readonly WebhookSecret[], id: string, atMs: number, body: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(atMs / 1000)),
    'webhook-signature': signatureHeader(secrets, id, atMs, body),
  };
}

/** The default {@link WebhookSend}: an undici POST with a timeout; the response body is read and dropped. */
export const undiciSend: WebhookSend = async ({ url, headers, body, timeoutMs }) => {
  const response = await request(url, {
    method: 'POST',
    headers,
    body,
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    signal: AbortSignal.timeout(timeoutMs),
  });
  await response.body.dump();
  return { status: response.statusCode };
};

function requirePositive(field: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw invalidArgument(field, `must be a positive integer, got ${String(value)}`);
  return value;
}

/**
 * A {@link Dispatcher} over `options.store` (see {@link DispatcherOptions}). Throws
 * `STORE_MISCONFIGURED` on a round when the store keeps no webhooks, and `INVALID_ARGUMENT` naming
 * an option out of range (`timeoutMs` must be below `leaseMs`).
 */
export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const clock = options.clock ?? systemClock;
  const random = options.random ?? Math.random;
  const send = options.send ?? undiciSend;
  const pollMs = requirePositive('pollMs', options.pollMs ?? DEFAULT_WEBHOOK_POLL_MS);
  const leaseMs = requirePositive('leaseMs', options.leaseMs ?? DEFAULT_WEBHOOK_LEASE_MS);
  const timeoutMs = requirePositive('timeoutMs', options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS);
  const batch = requirePositive('batch', options.batch ?? DEFAULT_WEBHOOK_BATCH);
  if (timeoutMs >= leaseMs) throw invalidArgument('timeoutMs', `must be below leaseMs (${leaseMs}), so an attempt ends while its claim stands`);
  const events: EventLogStore = options.events ?? (options.store as EventLogStore);
  const instance = ulid();
  let claims = 0;

  const fanOut = async (): Promise<number> => {
    const hooks = webhookStoreOf(options.store);
    if (events.eventsAfter === undefined) return 0;
    let made = 0;
    for (;;) {
      const cursor = await hooks.lowestCursor();
      if (cursor === null) return made;
      const page = await events.eventsAfter(cursor, FAN_OUT_PAGE);
      if (page.length === 0) return made;
      made += await hooks.fanOut(cursor, page, clock.nowMs());
      if (page.length < FAN_OUT_PAGE) return made;
    }
  };

  const attempt = async (claimed: ClaimedDelivery): Promise<void> => {
    const { delivery } = claimed;
    const body = webhookBody(delivery.event);
    const sentAtMs = clock.nowMs();
    const headers = webhookHeaders(signingSecrets(claimed.secrets, sentAtMs), delivery.event.id, sentAtMs, body);
    let result: string;
    let delivered = false;
    try {
      const { status } = await send({ url: claimed.url, headers, body, timeoutMs });
      delivered = isDeliveredStatus(status);
      result = `HTTP ${status}`;
    } catch (error) {
      result = error instanceof Error && error.name === 'TimeoutError' ? `timeout after ${timeoutMs} ms` : `network error: ${error instanceof Error ? error.message : String(error)}`;
    }
    const atMs = clock.nowMs();
    let outcome: AttemptOutcome;
    let metric: AttemptMetric;
    if (delivered) {
      outcome = { kind: 'delivered' };
      metric = 'delivered';
    } else {
      const next = afterFailedAttempt(delivery.attempts + 1, random());
      outcome = next.retry ? { kind: 'retry', dueAtMs: atMs + next.delayMs } : { kind: 'failed' };
      metric = next.retry ? 'failed_attempt' : 'undeliverable';
    }
    const recorded = await webhookStoreOf(options.store).recordAttempt({ deliveryId: delivery.id, claim: claimed.claim, atMs, outcome, result });
    if (recorded) options.onAttempt?.(metric, claimed);
  };

  // Attempts still in flight from the polling loop's rounds, which do not wait for them: one slow
  // endpoint (up to timeoutMs per attempt) never holds back the deliveries of the others.
  const sending = new Set<Promise<void>>();
  const maxSending = batch * 4;

  const claimAndSend = async (wait: boolean): Promise<DispatchRound> => {
    const fannedOut = await fanOut();
    const room = wait ? batch : Math.min(batch, maxSending - sending.size);
    if (room <= 0) return { fannedOut, attempted: 0 };
    claims += 1;
    const claimed = await webhookStoreOf(options.store).claimDue(clock.nowMs(), leaseMs, room, `${instance}.${claims}`);
    const sends = claimed.map((one) => {
      const sent: Promise<void> = attempt(one)
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => sending.delete(sent));
      sending.add(sent);
      return sent;
    });
    if (wait) await Promise.all(sends);
    return { fannedOut, attempted: claimed.length };
  };
  const round = (): Promise<DispatchRound> => claimAndSend(true);

  let running = false;
  let stopped = true;
  let again = false;
  let lastStartMs = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  // A round brought forward starts no sooner than WEBHOOK_NUDGE_GAP_MS after the last one began,
  // so a burst of nudges costs at most one round per gap.
  const soon = (): number => Math.max(0, Math.ceil(lastStartMs + WEBHOOK_NUDGE_GAP_MS - performance.now()));

  const schedule = (delayMs: number): void => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(tick, delayMs);
    timer.unref();
  };
  const tick = (): void => {
    if (stopped || running) return;
    running = true;
    again = false;
    lastStartMs = performance.now();
    inFlight = claimAndSend(false)
      .then(
        // A full batch leaves more due now: the next round starts at once.
        (done) => {
          if (done.attempted >= batch) again = true;
        },
        (error: unknown) => options.onError?.(error),
      )
      .finally(() => {
        running = false;
        schedule(again ? soon() : pollMs);
      });
  };

  return {
    round,
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    nudge() {
      if (running) again = true;
      else schedule(soon());
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight;
      await Promise.all([...sending]);
    },
  };
}
