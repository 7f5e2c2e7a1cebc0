import type { ApiKeyStore } from '../../store/api-keys.js';
import type { QuotaStore } from '../../store/store.js';
import { UsageError } from '../usage-error.js';

/**
 * The store's API keys, or a `UsageError` naming `--store` when its backend keeps none yet (the
 * port's `apiKeys` is optional until every adapter has it).
 */
export function storeApiKeys(store: QuotaStore): ApiKeyStore {
  const keys = store.apiKeys?.();
  if (keys === undefined) {
    throw new UsageError(`--store: the ${store.backend} store does not keep API keys yet; serve on a SQLite store (sqlite:<path>)`);
  }
  return keys;
}
