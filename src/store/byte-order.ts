/**
 * Compares two identifiers by their UTF-8 bytes, the order both stores list keys in ("C"
 * collation on PostgreSQL, BINARY on SQLite): negative, 0 or positive, as `Array.prototype.sort` takes.
 */
export function compareBytewise(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
