import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ulid } from 'ulid';

import { openStore } from '../../store/open-store.js';
import { redactStoreUrl } from '../../store/store-url.js';
import type { ReplayTarget } from './replay-run.js';

/** An opened replay target and how to give it back. */
export interface OpenedReplayTarget {
  readonly target: ReplayTarget;
  /** Closes the store and, for a temporary one not kept, removes its directory. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens where a replay runs:
 * - no `storeUrl`: a fresh durable SQLite file, `replay.db`, in a new temporary directory, removed
 *   by `close()` unless `keepStore`; tenants are named plainly;
 * - a `storeUrl`: that store, migrated on open, and every tenant name gets the prefix
 *   `replay-<ULID>-`, so rows an earlier replay (or anyone) left there cannot skew the invariants.
 *
 * Throws what `openStore` throws: `INVALID_ARGUMENT` for a URL it cannot read, `STORE_UNAVAILABLE`
 * when the store cannot be reached, `SCHEMA_TOO_NEW` for a store migrated by a newer quotaplane.
 */
export async function openReplayTarget(storeUrl: string | undefined, keepStore: boolean): Promise<OpenedReplayTarget> {
  if (storeUrl !== undefined) {
    const store = await openStore(storeUrl);
    let closed = false;
    return {
      target: { store, url: redactStoreUrl(storeUrl), temporary: false, kept: true, tenantPrefix: `replay-${ulid()}-` },
      async close() {
        if (closed) return;
        closed = true;
        await store.close();
      },
    };
  }
  const directory = await mkdtemp(join(tmpdir(), 'quotaplane-replay-'));
  const url = `sqlite:${join(directory, 'replay.db')}`;
  let store;
  try {
    store = await openStore(url);
  } catch (error) {
    await rm(directory, { recursive: true, force: true });
    throw error;
  }
  const opened = store;
  let closed = false;
  return {
    target: { store: opened, url, temporary: true, kept: keepStore, tenantPrefix: '' },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await opened.close();
      } finally {
        if (!keepStore) await rm(directory, { recursive: true, force: true });
      }
    },
  };
}
