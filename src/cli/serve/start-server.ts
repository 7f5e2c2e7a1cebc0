import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';

import { mintApiKey, type MintedApiKey } from '../../http/api-key-secret.js';
import { buildApp } from '../../http/build-app.js';
import { DEFAULT_MONEY_DISPLAY } from '../../http/dashboard.js';
import { createPlane } from '../../plane/create-plane.js';
import { startSweeper } from '../../plane/sweeper.js';
import { systemClock } from '../../plane/system-clock.js';
import { ALL_TENANTS } from '../../store/api-keys.js';
import { openStore } from '../../store/open-store.js';
import type { QuotaStore } from '../../store/store.js';
import { DEFAULT_SHUTDOWN_TIMEOUT_MS, type ServeConfig } from './serve-config.js';
import { storeApiKeys } from './store-api-keys.js';

/** The name of the operator key `serve` creates on a store that has no key at all. */
export const FIRST_KEY_NAME = 'first-operator';

/** A running server: its URL, the first key when this start created it (shown once), and how to stop it. */
export interface StartedServer {
  /** `http://host:port`, with the port actually bound (useful with port 0). */
  readonly url: string;
  /** The all-tenant operator key created because the store had none, or `null`. */
  readonly firstKey: MintedApiKey | null;
  /** True when the store holds keys but every one is revoked: nobody can call the server until `quotaplane keys create`. */
  readonly noUsableKey: boolean;
  /**
   * Stops the sweeper (letting a sweep in flight finish), stops accepting connections, lets
   * in-flight requests finish for up to `config.shutdownTimeoutMs` (default 10 000), then
   * force-closes the connections still open and closes the store. Idempotent; resolves when all are done.
   */
  close(): Promise<void>;
}

/**
 * Starts the HTTP service (issue #4 item 1): opens and migrates the store, builds the app over a
 * plane on the wall clock, listens, and only then creates the first all-tenant operator key when
 * the store holds no key at all (decided in one transaction, so two servers starting together
 * create one). Creating it after `listen` succeeded means a start that fails to listen leaves no
 * key nobody was shown. When every stored key is revoked it logs a warning (and says so in
 * `noUsableKey`). Once listening, it sweeps lapsed leases every `config.sweepIntervalMs` (issue #5; none
 * when 0), logging each sweep that changed something and each that failed. Any number of servers
 * may sweep one store: each run is swept in its own transaction, which re-checks the lease. Throws what `openStore` throws, `UsageError` for a store without API keys, and the
 * listen error (for example `EADDRINUSE`) after closing what it opened.
 */
export async function startServer(config: ServeConfig, options: { logger?: FastifyBaseLogger | undefined } = {}): Promise<StartedServer> {
  const store: QuotaStore = await openStore(config.storeUrl);
  try {
    const keys = storeApiKeys(store);
    const plane = createPlane({ store });
    const app = await buildApp({
      plane,
      store,
      keys,
      logger: options.logger,
      dashboard: { money: { currency: config.currency ?? DEFAULT_MONEY_DISPLAY.currency, minorUnitsPerUnit: config.minorUnitsPerUnit ?? DEFAULT_MONEY_DISPLAY.minorUnitsPerUnit } },
    });
    try {
      await app.listen({ host: config.host, port: config.port });
    } catch (error) {
      await app.close();
      throw error;
    }
    let created = false;
    let first: MintedApiKey;
    let noUsableKey = false;
    try {
      first = mintApiKey({ role: 'operator', tenant: ALL_TENANTS, name: FIRST_KEY_NAME, atMs: systemClock.nowMs() });
      created = await keys.createFirst(first.key);
      noUsableKey = !created && (await keys.list()).every((key) => key.revokedAtMs !== null);
    } catch (error) {
      await app.close();
      throw error;
    }
    if (noUsableKey) {
      app.log.warn(
        "every API key in the store is revoked: no request can authenticate; create one with 'quotaplane keys create --role operator --tenant \"*\" --name <name>'",
      );
    }
    const stopSweeper =
      config.sweepIntervalMs === 0
        ? async () => {}
        : startSweeper(plane, {
            intervalMs: config.sweepIntervalMs,
            onSweep: (result) => {
              if (result.swept.length > 0) app.log.info({ swept: result.swept }, `swept ${result.swept.length} run(s) whose lease lapsed`);
            },
            onError: (error) => app.log.warn({ err: error }, 'sweep of lapsed leases failed; the next one retries'),
          });
    const address = app.server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    let closing: Promise<void> | null = null;
    return {
      url: `http://${host}:${address.port}`,
      firstKey: created ? first : null,
      noUsableKey,
      close() {
        closing ??= (async () => {
          try {
            await stopSweeper();
            await drainThenClose(app, config.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS);
          } finally {
            await store.close();
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

// Closes the app, waiting at most `timeoutMs` for open connections (a client that sent half a
// request and went quiet would hold `close` forever), then cuts the ones still open.
async function drainThenClose(app: { close(): Promise<void>; server: { closeAllConnections(): void } }, timeoutMs: number): Promise<void> {
  const closed = app.close();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), timeoutMs);
  });
  try {
    if ((await Promise.race([closed.then(() => 'closed' as const), expired])) === 'expired') {
      app.server.closeAllConnections();
      await closed;
    }
  } finally {
    clearTimeout(timer);
  }
}
