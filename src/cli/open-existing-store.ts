import { isQuotaError } from '../core/errors.js';
import { openStore } from '../store/open-store.js';
import type { QuotaStore } from '../store/store.js';
import { UsageError } from './usage-error.js';

/**
 * Opens the store a command only reads or acts on, never creating one: a SQLite path with no
 * file is a usage error (exit 2) naming the path, so `status --store ./typo.db` does not answer
 * "no tenants" from a database it just made. Only `serve`, `keys create` and `replay` create a
 * store. Other faults pass through as `openStore` throws them.
 */
export async function openExistingStore(url: string): Promise<QuotaStore> {
  try {
    return await openStore(url, { create: false });
  } catch (error) {
    if (isQuotaError(error, 'STORE_UNAVAILABLE') && error.details.missing === true) {
      throw new UsageError(
        `${error.message}; check --store, or start \`quotaplane serve --store ${url}\` to create one`,
      );
    }
    throw error;
  }
}
