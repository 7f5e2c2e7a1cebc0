/**
 * A store URL safe to print, log or put in an error (issue #10 item 1): the password of any
 * `scheme://user:password@host/…` URL (`postgres://`, `postgresql://`, and a mistyped scheme such
 * as `postgress://` too) is replaced by `***`, and so is the value of every `password=` query
 * parameter. Anything else (SQLite paths, URLs without a password) comes back unchanged. Works on
 * text, not a URL parser, so a URL that does not parse is redacted as well.
 */
export function redactStoreUrl(url: string): string {
  return url
    .replace(/^([a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:)[^/?#]*@/i, '$1***@')
    .replace(/([?&;]password=)[^&#;]*/gi, '$1***');
}

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
  const userInfo = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@:]*:([^/?#]*)@/i.exec(url);
  const query = [...url.matchAll(/[?&;]password=([^&#;]*)/gi)].map((match) => match[1] ?? '');
  for (const raw of [userInfo?.[1], ...query]) {
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
