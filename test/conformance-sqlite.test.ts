import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { isQuotaError } from '../src/core/errors.js';
import { openStore } from '../src/store/open-store.js';
import type { QuotaStore } from '../src/store/store.js';
import type { OpenedStore } from '../src/testing/index.js';
import { describeConformance } from '../src/testing/vitest.js';

// The SQLite adapter against the whole conformance battery (docs/design/rules.md#g8), once in memory
// and once on a file, each group on its own fresh database.

// Some groups close the store themselves (L38), so closing again must not fail the group.
async function closeOnce(store: QuotaStore): Promise<void> {
  try {
    await store.close();
  } catch (error) {
    if (!isQuotaError(error, 'STORE_UNAVAILABLE')) throw error;
  }
}

describeConformance('sqlite::memory:', async (): Promise<OpenedStore> => {
  const store = await openStore('sqlite::memory:');
  return { store, close: () => closeOnce(store) };
});

describeConformance('sqlite:<temp file>', async (): Promise<OpenedStore> => {
  const dir = await mkdtemp(join(tmpdir(), 'quotaplane-conformance-'));
  const store = await openStore(`sqlite:${join(dir, 'q.db')}`);
  return {
    store,
    close: async () => {
      await closeOnce(store);
      await rm(dir, { recursive: true, force: true });
    },
  };
});
