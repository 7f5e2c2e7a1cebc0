import { LAST_USED_GRANULARITY_MS, type ApiKeyRecord, type ApiKeyStore, type KeyUse } from '../store/api-keys.js';

/** Records which keys authenticated requests (`lastUsedAtMs`), off the request's path. */
export interface KeyUseRecorder {
  /** Notes that `key` authenticated a request at `atMs`; never waits and never throws. */
  note(key: ApiKeyRecord, atMs: number): void;
  /** Writes what is noted and not yet written; resolves when the write ends (its failure is logged). */
  flush(): Promise<void>;
}

/**
 * A {@link KeyUseRecorder} that writes each key's use at most once per
 * {@link LAST_USED_GRANULARITY_MS} (one minute) in this process, so authenticating stays a read:
 * a use is skipped when the key's stored `lastUsedAtMs`, or this process's last write for it, is
 * less than a minute old. Uses noted in one turn of the event loop go to the store in one
 * `recordUse` call, started after the request's own work was queued and never awaited by it; a
 * failed write is handed to `onError` (logged by the server) and the uses are dropped, as
 * `lastUsedAtMs` is advisory (docs/guides/operating.md#api-keys).
 */
export function createKeyUseRecorder(keys: ApiKeyStore, onError: (error: unknown) => void): KeyUseRecorder {
  const written = new Map<string, number>();
  let queued = new Map<string, number>();
  let writing: Promise<void> = Promise.resolve();
  let scheduled = false;
  const flush = (): Promise<void> => {
    scheduled = false;
    const uses: KeyUse[] = [...queued].map(([id, atMs]) => ({ id, atMs }));
    queued = new Map();
    if (uses.length > 0) {
      writing = writing.then(() => keys.recordUse(uses)).catch(onError);
    }
    return writing;
  };
  return {
    note(key, atMs) {
      const last = Math.max(key.lastUsedAtMs ?? -Infinity, written.get(key.id) ?? -Infinity);
      if (atMs - last < LAST_USED_GRANULARITY_MS) return;
      written.set(key.id, atMs);
      queued.set(key.id, atMs);
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => void flush());
      }
    },
    flush,
  };
}
