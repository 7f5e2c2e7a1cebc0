import { openStore } from '../store/open-store.js';
import type { QuotaStore } from '../store/store.js';

/**
 * Opens the store a command reads or acts on, never creating, migrating or otherwise altering one:
 * where there is no quotaplane store (a mistyped path or `?schema=`, another
 * application's database) or the store needs migrating, it throws `STORE_MISCONFIGURED`, which
 * `main` prints naming what is wrong and exits 3, and the file or schema is left as it was. Only
 * `serve`, `migrate`, `keys create` and `replay` create or migrate a store.
 */
export async function openExistingStore(url: string): Promise<QuotaStore> {
  return openStore(url, { create: false, migrate: false });
}
