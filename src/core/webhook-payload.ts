import type { QuotaEvent } from './events.js';

/**
 * The body of every attempt to deliver `event` (docs/design/rules.md#h2), as the exact string that
 * is signed and sent: `{"type", "timestamp" (ISO 8601 of atMs), "data": {...data, tenant, seq}}`.
 * The same event always gives the same bytes, so a retry or a resend sends what the first attempt
 * sent.
 */
export function webhookBody(event: Pick<QuotaEvent, 'type' | 'atMs' | 'data' | 'tenant' | 'seq'>): string {
  return JSON.stringify({
    type: event.type,
    timestamp: new Date(event.atMs).toISOString(),
    data: { ...event.data, tenant: event.tenant, seq: event.seq },
  });
}
