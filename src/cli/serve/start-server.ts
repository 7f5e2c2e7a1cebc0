import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';

import { mintApiKey, type MintedApiKey } from '../../http/api-key-secret.js';
import { buildApp } from '../../http/build-app.js';
import { createPlane } from '../../plane/create-plane.js';
import { startSweeper } from '../../plane/sweeper.js';
import { systemClock } from '../../plane/system-clock.js';
import { ALL_TENANTS } from '../../store/api-keys.js';
import { openStore } from '../../store/open-store.js';
import type { QuotaStore } from '../../store/store.js';
import type { ServeConfig } from './serve-config.js';
import { storeApiKeys } from './store-api-keys.js';

/** The name of the operator key `serve` creates on a store that has no key at all. */
export const FIRST_KEY_NAME = 'first-operator';

/** A running server: its URL, the first key when this start created it (shown once), and how to stop it. */
export interface StartedServer {
  /** `http://host:port`, with the port actually bound (useful with port 0). */
  readonly url: string;
  /** The all-tenant operator key created because the store had none, or `null`. */
  readonly firstKey: MintedApiKey | null;
  /**
   * Stops the sweeper (letting a sweep in flight finish), stops accepting connections, lets
   * in-flight requests finish, then closes the store. Idempotent; resolves when all are done.
   */
  close(): Promise<void>;
}

/**
 * Starts the HTTP service (issue #4 item 1): opens and migrates the store, creates the first
 * all-tenant operator key when the store holds no key at all (decided in one transaction, so two
 * servers starting together create one), builds the app over a plane on the wall clock, and
 * listens. Once listening, it sweeps lapsed leases every `config.sweepIntervalMs` (issue #5; none
 * when 0), logging each sweep that changed something and each that failed. Any number of servers
 * may sweep one store: each run is swept in its own transaction, which re-checks the lease. Throws what `openStore` throws, `UsageError` for a store without API keys, and the
 * listen error (for example `EADDRINUSE`) after closing what it opened.
 */
export async function startServer(config: ServeConfig, options: { logger?: FastifyBaseLogger | undefined } = {}): Promise<StartedServer> {
  const store: QuotaStore = await openStore(config.storeUrl);
  try {
    const keys = storeApiKeys(store);
    const first = mintApiKey({ role: 'operator', tenant: ALL_TENANTS, name: FIRST_KEY_NAME, atMs: systemClock.nowMs() });
    const created = await keys.createFirst(first.key);
    const plane = createPlane({ store });
    const app = await buildApp({ plane, store, keys, logger: options.logger });
    try {
      await app.listen({ host: config.host, port: config.port });
    } catch (error) {
      await app.close();
      throw error;
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
      close() {
        closing ??= (async () => {
          try {
            await stopSweeper();
            await app.close();
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
