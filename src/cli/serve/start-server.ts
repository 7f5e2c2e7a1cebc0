import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';

import type { AuditAction } from '../../core/audit-actions.js';
import { isQuotaError } from '../../core/errors.js';
import { mintApiKey, type MintedApiKey } from '../../http/api-key-secret.js';
import { buildApp } from '../../http/build-app.js';
import { DEFAULT_MONEY_DISPLAY } from '../../http/dashboard.js';
import { KEYS_AUDIT_TENANT } from '../../core/identifiers.js';
import { createPlane } from '../../plane/create-plane.js';
import { startSweeper } from '../../plane/sweeper.js';
import { createDispatcher, DEFAULT_WEBHOOK_POLL_MS } from '../../plane/webhook-dispatcher.js';
import { nudgingPlane } from '../../plane/webhook-nudge.js';
import { startPruner } from '../../plane/pruner.js';
import { systemClock } from '../../plane/system-clock.js';
import { ALL_TENANTS } from '../../store/api-keys.js';
import { openStore } from '../../store/open-store.js';
import type { QuotaStore } from '../../store/store.js';
import { redactStoreUrl } from '../../store/store-url.js';
import { unvalidated } from '../../store/validated-store.js';
import type { FirstKeyReservation } from './first-key-file.js';
import { PendingStore } from './pending-store.js';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, DEFAULT_STARTUP_TIMEOUT_MS } from './serve-settings.js';
import type { ServeConfig } from './serve-config.js';

/** The name of the operator key `serve` creates on a store that has no key at all. */
export const FIRST_KEY_NAME = 'first-operator';

/** First pause between two attempts to open a store that is not reachable yet, in ms; it doubles up to {@link MAX_RETRY_PAUSE_MS}. */
export const FIRST_RETRY_PAUSE_MS = 250;
/** Longest pause between two attempts to open the store, in ms. */
export const MAX_RETRY_PAUSE_MS = 5_000;

/** A running server: its URL, the first key when this start created it (shown once), and how to stop it. */
export interface StartedServer {
  /** `http://host:port`, with the port actually bound (useful with port 0). */
  readonly url: string;
  /** The all-tenant operator key created because the store had none, or `null`. */
  readonly firstKey: MintedApiKey | null;
  /** True when the store holds keys but every one is revoked: nobody can call the server until `quotaplane keys create`. */
  readonly noUsableKey: boolean;
  /** True when usable keys exist but none is an operator's: the dashboard and operator routes are closed to everyone. */
  readonly noOperatorKey: boolean;
  /**
   * Stops: `/readyz` answers 503 and the listener stops accepting connections
   * at once, whatever the store is doing; requests in flight get up to `config.shutdownTimeoutMs`
   * (default 10 000) to finish, then their connections are cut; the sweeper is stopped and the
   * store closed within the same limit (a store that does not close in time is left behind, with
   * a warning). Idempotent; resolves when all are done.
   */
  close(): Promise<void>;
}

/** Options of {@link startServer}. */
export interface StartOptions {
  /** Request and operational logs (JSON lines); default none. */
  readonly logger?: FastifyBaseLogger | undefined;
  /** Aborting it gives up waiting for the store (a SIGTERM during the start). */
  readonly signal?: AbortSignal | undefined;
  /** Called as soon as the port listens, before the store is open. */
  readonly onListening?: ((url: string) => void) | undefined;
  /**
   * Called when the store holds no key, before the first key is made: where it will be written
   * (`serve`'s `--first-key-file`). Throwing stops the start and no key is made.
   */
  readonly reserveFirstKey?: (() => FirstKeyReservation) | undefined;
}

/**
 * Starts the HTTP service: builds the app in front of a store that is not open yet, listens (so
 * `/healthz` answers at once and `/readyz` 503 until the store is usable), then
 * opens and migrates the store, retrying a store that is not reachable yet (`STORE_UNAVAILABLE`)
 * with backoff (250 ms doubling to 5 s) for up to `config.startupTimeoutMs` (default 30 000),
 * logging each attempt at `warn`. A configuration error (`STORE_MISCONFIGURED`), a corrupt store
 * or one too new is not retried. Once the store is open it creates the first all-tenant operator
 * key when the store holds no key at all (one transaction, so two servers starting together create
 * one), warns when every key is revoked, and sweeps lapsed leases every `config.sweepIntervalMs`
 * (none when 0). Throws the listen error (for example `EADDRINUSE`) or the store's fault, after
 * closing what it opened.
 */
export async function startServer(config: ServeConfig, options: StartOptions = {}): Promise<StartedServer> {
  const logger = options.logger;
  const pending = new PendingStore(/^postgres(ql)?:\/\//.test(config.storeUrl) ? 'postgres' : 'sqlite');
  const keys = pending.apiKeys();
  // The webhook dispatcher, once the store is open, is nudged by every verb that may write an event.
  let nudgeWebhooks: () => void = () => undefined;
  const plane = nudgingPlane(createPlane({ store: pending }), () => nudgeWebhooks());
  let stopping = false;
  const app = await buildApp({
    plane,
    store: pending,
    keys,
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    metricsTenants: config.metricsTenants,
    spentOutStatus: config.spentOutStatus,
    readiness: () => (stopping ? 'the server is stopping' : pending.isOpen ? null : 'the store is not open yet'),
    dashboard: {
      money: {
        currency: config.currency ?? DEFAULT_MONEY_DISPLAY.currency,
        minorUnitsPerUnit: config.minorUnitsPerUnit ?? DEFAULT_MONEY_DISPLAY.minorUnitsPerUnit,
      },
    },
  });
  try {
    await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  options.onListening?.(url);

  let store: QuotaStore;
  try {
    store = await openWithRetry(config, app.log, options.signal);
  } catch (error) {
    await app.close();
    throw error;
  }
  // The plane behind `pending` checks every request with the port's rules (docs/design/architecture.md
  // "Validation, once"), so `pending` forwards to the adapter under openStore's validated() wrapper:
  // no decision is checked twice.
  pending.open(unvalidated(store));

  let first: MintedApiKey;
  let created = false;
  let noUsableKey = false;
  let noOperatorKey = false;
  try {
    first = mintApiKey({ role: 'operator', tenant: ALL_TENANTS, name: FIRST_KEY_NAME, atMs: systemClock.nowMs() });
    // Where the key goes is made ready first: a key nobody can be handed is never made.
    const reservation = options.reserveFirstKey !== undefined && (await keys.list()).length === 0 ? options.reserveFirstKey() : null;
    created = await keys.createFirst(first.key).catch((error: unknown) => {
      reservation?.cancel();
      throw error;
    });
    if (created) reservation?.write(first.secret);
    else reservation?.cancel();
    // The first key is audited as every key creation is, by this start.
    if (created) {
      await store.tenant(KEYS_AUDIT_TENANT).appendAudit({
        atMs: first.key.createdAtMs,
        by: { actor: 'quotaplane-serve', basis: 'asserted' },
        action: 'key.create' satisfies AuditAction,
        subject: first.key.id,
        detail: { name: first.key.name, role: first.key.role, tenant: first.key.tenant },
      });
    }
    if (!created) {
      const usable = (await keys.list()).filter((key) => key.revokedAtMs === null);
      noUsableKey = usable.length === 0;
      noOperatorKey = usable.length > 0 && usable.every((key) => key.role !== 'operator');
    }
  } catch (error) {
    await app.close();
    await store.close();
    throw error;
  }
  if (noOperatorKey) {
    app.log.warn(
      "no API key in the store is an operator's: the dashboard and operator routes accept no one; create one with 'quotaplane keys create --role operator --tenant \"*\" --name <name>'",
    );
  }
  if (noUsableKey) {
    app.log.warn(
      "every API key in the store is revoked: no request can authenticate; create one with 'quotaplane keys create --role operator --tenant \"*\" --name <name>'",
    );
  }
  const sweepIntervalMs = config.sweepIntervalMs;
  const stopSweeper =
    sweepIntervalMs === 0
      ? async () => {}
      : startSweeper(plane, {
          intervalMs: sweepIntervalMs,
          onSweep: (result, timing) => {
            app.observeSweep(timing);
            if (result.swept.length > 0) app.log.info({ swept: result.swept }, `swept ${result.swept.length} run(s) whose lease lapsed`);
          },
          onError: (error) => app.log.warn({ err: error }, 'sweep of lapsed leases failed; the next one retries'),
        });
  // The webhook dispatcher (docs/guides/webhooks.md): one per process; instances sharing a store
  // claim each delivery once between them (docs/design/rules.md#h7).
  const webhookPollMs = config.webhookPollMs ?? DEFAULT_WEBHOOK_POLL_MS;
  const dispatcher =
    webhookPollMs === 0 || store.webhooks === undefined
      ? null
      : createDispatcher({
          store,
          pollMs: webhookPollMs,
          onAttempt: (outcome, claimed) => {
            app.observeWebhookAttempt(outcome);
            if (outcome === 'undeliverable') {
              app.log.warn({ delivery: claimed.delivery.id, url: claimed.url }, 'a webhook delivery ran out of attempts; resend it with quotaplane webhooks resend');
            }
          },
          onError: (error) => app.log.warn({ err: error }, 'a webhook dispatch round failed; the next one retries'),
        });
  dispatcher?.start();
  if (dispatcher !== null) nudgeWebhooks = () => dispatcher.nudge();
  const pruneOlderThanMs = config.pruneOlderThanMs;
  const stopPruner =
    pruneOlderThanMs === undefined
      ? async () => {}
      : startPruner(plane, {
          olderThanMs: pruneOlderThanMs,
          intervalMs: config.pruneIntervalMs,
          by: { actor: 'quotaplane-serve', basis: 'asserted' },
          onPrune: (result) => {
            if (result.tenants.length > 0) app.log.info({ pruned: result.total, tenants: result.tenants.length }, `pruned ${result.total.runs} closed run(s) and ${result.total.rateDispatches} rate instant(s)`);
          },
          onError: (error) => app.log.warn({ err: error }, 'prune failed; the next one retries'),
        });
  let closing: Promise<void> | null = null;
  return {
    url,
    firstKey: created ? first : null,
    noUsableKey,
    noOperatorKey,
    close() {
      closing ??= (async () => {
        stopping = true;
        const limitMs = config.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS;
        const deadline = Date.now() + limitMs;
        // The listener closes first and at once: the sweeper may be waiting on a hung store.
        const drained = drainThenClose(app, limitMs);
        const sweeperStopped = stopSweeper();
        const prunerStopped = stopPruner();
        const dispatcherStopped = dispatcher?.stop() ?? Promise.resolve();
        await drained;
        if (!(await within(sweeperStopped, deadline - Date.now()))) app.log.warn('the sweeper did not stop within the drain limit; stopping without it');
        if (!(await within(prunerStopped, deadline - Date.now()))) app.log.warn('the pruner did not stop within the drain limit; stopping without it');
        if (!(await within(dispatcherStopped, deadline - Date.now()))) app.log.warn('the webhook dispatcher did not stop within the drain limit; stopping without it');
        if (!(await within(store.close(), Math.max(deadline - Date.now(), 1000)))) {
          app.log.warn('the store did not close within the drain limit; leaving its connections behind');
        }
      })();
      return closing;
    },
  };
}

// Opens the store, retrying one that cannot answer yet with backoff until the startup timeout.
async function openWithRetry(config: ServeConfig, log: FastifyBaseLogger, signal: AbortSignal | undefined): Promise<QuotaStore> {
  const deadline = Date.now() + (config.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS);
  let pauseMs = FIRST_RETRY_PAUSE_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await openStore(config.storeUrl);
    } catch (error) {
      const retryable = isQuotaError(error, 'STORE_UNAVAILABLE');
      const leftMs = deadline - Date.now();
      if (!retryable || leftMs <= 0 || signal?.aborted === true) throw error;
      const waitMs = Math.min(pauseMs, leftMs);
      log.warn(
        { attempt, retryInMs: waitMs, store: redactStoreUrl(config.storeUrl), err: error },
        `the store is not reachable yet (attempt ${attempt}); retrying in ${waitMs} ms`,
      );
      if (!(await pause(waitMs, signal))) throw error;
      pauseMs = Math.min(pauseMs * 2, MAX_RETRY_PAUSE_MS);
    }
  }
}

// Waits `ms`; answers false when `signal` aborted first.
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve(false);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

// True when `promise` settled within `ms` (its rejection counts as settled).
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), Math.max(ms, 0));
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

// Closes the app, waiting at most `timeoutMs` for open connections (a client that sent half a
// request and went quiet would hold `close` forever), then cuts the ones still open.
async function drainThenClose(app: { close(): Promise<void>; server: { closeAllConnections(): void } }, timeoutMs: number): Promise<void> {
  const closed = app.close();
  if (!(await within(closed, timeoutMs))) {
    app.server.closeAllConnections();
    await closed;
  }
}
