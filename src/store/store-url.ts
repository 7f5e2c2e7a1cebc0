/**
 * A store URL safe to print or log: the password of a `postgres://user:password@host/db` URL is
 * replaced by `***`; every other form (SQLite paths, URLs without a password) comes back unchanged.
 * A string that does not parse as a URL is returned as is, since it holds no credential we could find.
 */
export function redactStoreUrl(url: string): string {
  if (!/^postgres(ql)?:\/\//i.test(url)) return url;
  try {
    const parsed = new URL(url);
    if (parsed.password === '') return url;
    parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}
