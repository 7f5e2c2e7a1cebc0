/**
 * An instant (integer Unix milliseconds) as ISO 8601 UTC to the second, for messages and terminal
 * output: `instant(Date.UTC(2026, 0, 5, 8))` is `2026-01-05T08:00:00Z`. Never throws: an instant a
 * `Date` cannot show (beyond ±8.64e15 ms, or not a number) comes back as its raw ms
 * (`9007199254740991ms`), so one odd row (a lease capped at 2^53 − 1) cannot break a message or a
 * whole listing. Scripts read the `…AtMs` fields, never this text.
 */
export function instant(ms: number): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return `${ms}ms`;
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
