import { closeSync, fchmodSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { parseStoreUrl, SQLITE_MEMORY_PATH } from '../../store/store-url.js';
import { UsageError } from '../usage-error.js';

/** What `--first-key-file` takes to print the first key on stderr instead of writing a file. */
export const FIRST_KEY_TO_STDERR = '-';

/** The file name of the first key when no `--first-key-file` names one. */
export const FIRST_KEY_FILE_NAME = 'quotaplane-first-key';

/**
 * Where `serve` writes the first key by default: beside the SQLite store file
 * (`./quotaplane.db` → `./quotaplane-first-key`), else (PostgreSQL, `:memory:`) in the working
 * directory.
 */
export function defaultFirstKeyFile(storeUrl: string): string {
  try {
    const location = parseStoreUrl(storeUrl);
    if (location.backend === 'sqlite' && location.path !== SQLITE_MEMORY_PATH) return join(dirname(location.path), FIRST_KEY_FILE_NAME);
  } catch {
    // A store URL that does not parse fails when the store opens; the key goes to the working directory.
  }
  return join('.', FIRST_KEY_FILE_NAME);
}

/** A file made for the first key before the key is: written once the key exists, or removed. */
export interface FirstKeyReservation {
  write(secret: string): void;
  cancel(): void;
}

/**
 * Creates `path` for the first key, exclusively and with mode 0600, before the key is made, so a
 * key is never made that cannot be handed over. An existing file is never overwritten: throws a
 * `UsageError` naming it, and no key is made.
 */
export function reserveFirstKeyFile(path: string): FirstKeyReservation {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') {
      throw new UsageError(
        `--first-key-file: ${path} exists and is never overwritten; the store has no API key yet, so serve would make one and write it there: ` +
          `move the file away, name another with --first-key-file <path>, or print the key on stderr with --first-key-file ${FIRST_KEY_TO_STDERR}`,
      );
    }
    throw new UsageError(`--first-key-file: cannot create ${path} (${code ?? String(error)}); name a writable path, or ${FIRST_KEY_TO_STDERR} for stderr`);
  }
  let open = true;
  const close = () => {
    if (open) closeSync(fd);
    open = false;
  };
  return {
    write(secret) {
      try {
        // The umask may have narrowed the mode further, never widened it; make it exactly 0600.
        fchmodSync(fd, 0o600);
        writeSync(fd, `${secret}\n`);
      } finally {
        close();
      }
    },
    cancel() {
      close();
      unlinkSync(path);
    },
  };
}
