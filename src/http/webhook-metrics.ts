import { Counter, Gauge, type Registry } from 'prom-client';

import type { AttemptMetric } from '../plane/webhook-dispatcher.js';
import { WEBHOOK_DELIVERIES_TOTAL, WEBHOOK_DELIVERY_OUTCOMES, WEBHOOK_OLDEST_UNDELIVERED_SECONDS } from './webhook-metric-names.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts one recorded webhook attempt (webhook-metrics.ts); `quotaplane serve` hands its dispatcher's attempts here. */
    observeWebhookAttempt(outcome: AttemptMetric): void;
  }
}

/**
 * The webhook metrics (docs/design/rules.md#h3–#h5), named by webhook-metric-names.ts:
 * - `quotaplane_webhook_deliveries_total{outcome}`: attempts recorded by this process's dispatcher,
 *   `delivered` (a 2xx), `failed_attempt` (another follows) or `undeliverable` (the last of its
 *   attempts failed; the delivery is now `failed`);
 * - `quotaplane_webhook_oldest_undelivered_seconds`: the age of the oldest pending delivery in the
 *   store, in seconds (0 when none), read on scrape with `oldestPendingAtMs` (absent for a store
 *   without webhooks).
 * Returns the function that counts one attempt.
 */
export function createWebhookMetrics(
  registry: Registry,
  oldestPendingAtMs: (() => Promise<number | null>) | undefined,
  nowMs: () => number = Date.now,
): (outcome: AttemptMetric) => void {
  const attempts = new Counter({
    name: WEBHOOK_DELIVERIES_TOTAL,
    help: 'Webhook delivery attempts recorded by this process: delivered (2xx), failed_attempt (retried later) or undeliverable (out of attempts).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of WEBHOOK_DELIVERY_OUTCOMES) attempts.inc({ outcome }, 0);
  if (oldestPendingAtMs !== undefined) {
    new Gauge({
      name: WEBHOOK_OLDEST_UNDELIVERED_SECONDS,
      help: 'Age in seconds of the oldest webhook delivery not yet delivered (pending), 0 when none.',
      registers: [registry],
      async collect() {
        // A store that cannot answer (not open yet, unreachable) leaves the last value: /metrics still answers.
        const oldest = await oldestPendingAtMs().catch(() => undefined);
        if (oldest !== undefined) this.set(oldest === null ? 0 : Math.max(0, nowMs() - oldest) / 1000);
      },
    });
  }
  return (outcome) => attempts.inc({ outcome });
}
