import { describe } from '../core/amounts.js';
import { invalidArgument } from '../core/errors.js';

/** The store URL forms `openStore` accepts, as its error message lists them. */
export const STORE_URL_FORMS: readonly string[] = Object.freeze([
  'sqlite:<path>',
  'sqlite::memory:',
  '<path>.db',
  'postgres://…',
  'postgresql://…',
]);

/** The path better-sqlite3 reads as a private in-memory database (`sqlite::memory:`). */
export const SQLITE_MEMORY_PATH = ':memory:';

/** Which backend a store URL names: PostgreSQL, or a SQLite file (or `:memory:`) at `path`. */
export type StoreLocation = { readonly backend: 'postgres' } | { readonly backend: 'sqlite'; readonly path: string };

/**
 * Which store `url` names, from its form alone (nothing is opened, no driver is loaded):
 * `postgres://…` or `postgresql://…`; `sqlite:<path>` (also `sqlite://<path>`), `sqlite::memory:`,
 * or a bare path ending in `.db`. Throws `INVALID_ARGUMENT` on field `url` for anything else,
 * listing {@link STORE_URL_FORMS} (the URL shown with its password as `***`).
 */
export function parseStoreUrl(url: unknown): StoreLocation {
  if (typeof url === 'string') {
    if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return { backend: 'postgres' };
    const path = sqlitePath(url);
    if (path !== null) return { backend: 'sqlite', path };
  }
  throw invalidArgument(
    'url',
    `must name a store as ${STORE_URL_FORMS.map((form) => `'${form}'`).join(', ')}; got ${describe(typeof url === 'string' ? redactStoreUrl(url) : url)}`,
  );
}

// The SQLite path a URL names, or null when it names no SQLite database.
function sqlitePath(url: string): string | null {
  if (url === `sqlite:${SQLITE_MEMORY_PATH}`) return SQLITE_MEMORY_PATH;
  if (url.startsWith('sqlite:')) {
    const rest = url.slice('sqlite:'.length);
    const path = rest.startsWith('//') ? rest.slice(2) : rest;
    return path.length > 0 ? path : null;
  }
  // A bare path may not begin like a URL scheme of two letters or more (`sqllite:`, `file:`): such a
  // typo would otherwise be taken for a file name. Name an odd file explicitly: `sqlite:data:x.db`.
  if (url.endsWith('.db') && url.length > '.db'.length && !/^[a-z][a-z0-9+.-]+:/i.test(url)) return url;
  return null;
}

/**
 * A store URL safe to print, log or put in an error: the password of any
 * `scheme://user:password@host/…` URL (`postgres://`, `postgresql://`, and a mistyped scheme such
 * as `postgress://` too) is replaced by `***`, and so is the value of every `password=` query
 * parameter or libpq `password=` keyword (`host=h password=p`). Anything else (SQLite paths, URLs
 * without a password) comes back unchanged. Works on text, not a URL parser, so a URL that does
 * not parse is redacted as well: the password runs to the last `@`, so one holding an unencoded
 * `/`, `?`, `#` or `@` is hidden whole (text after it that holds an `@` is hidden with it).
 */
export function redactStoreUrl(url: string): string {
  return url.replace(USER_INFO_PASSWORD, '$1***@').replace(PASSWORD_PARAMETER, '$1***');
}

// `scheme://user:` (group 1) then the password (group 2), up to the last `@` (greedy).
const USER_INFO_PASSWORD = /^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:)(.*)@/is;
// A `password=` query parameter or libpq keyword, its value bare or single-quoted.
const PASSWORD_PARAMETER = /((?:^|[?&;\s])password\s*=\s*)('(?:[^'\\]|\\.)*'|[^&#;\s]*)/gi;

/**
 * `text` with every secret a store URL holds taken out: the URL as {@link redactStoreUrl} shows
 * it, and its raw password wherever else it appears (a driver may quote it in a message). Use on
 * any message that may carry the URL or part of it.
 */
export function redactSecrets(text: string, url: string): string {
  let result = text.split(url).join(redactStoreUrl(url));
  for (const secret of storeUrlSecrets(url)) {
    if (secret.length >= 3) result = result.split(secret).join('***');
  }
  return result;
}

/** The secrets a store URL holds: its password (raw and percent-decoded) and any `password=` value. */
export function storeUrlSecrets(url: string): string[] {
  const secrets: string[] = [];
  const userInfo = USER_INFO_PASSWORD.exec(url);
  const query = [...url.matchAll(PASSWORD_PARAMETER)].map((match) => (match[2] ?? '').replace(/^'(.*)'$/s, '$1'));
  for (const raw of [userInfo?.[2], ...query]) {
    if (raw === undefined || raw === '') continue;
    secrets.push(raw);
    try {
      const decoded = decodeURIComponent(raw);
      if (decoded !== raw) secrets.push(decoded);
    } catch {
      // Not percent-encoded text: the raw form is the one to hide.
    }
  }
  return secrets;
}
