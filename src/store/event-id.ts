import { createHash } from 'node:crypto';

/**
 * The id of the event whose key is `key` (core/events.ts `eventKey`): `evt_` and the first 32 hex
 * digits of its SHA-256, the same on every instance, retry and restart, and safe in an HTTP header
 * whatever characters the key's identifiers hold (docs/design/rules.md#e1).
 */
export function eventId(key: string): string {
  return `evt_${createHash('sha256').update(key).digest('hex').slice(0, 32)}`;
}
