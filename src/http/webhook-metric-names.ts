// The names of the webhook delivery metrics, shared by the code that exports them and by the
// shipped dashboard and alert rules (deploy/grafana/quotaplane-dashboard.json,
// deploy/prometheus/quotaplane-alerts.yml), which test/http/deploy-artefacts.test.ts checks
// against the registry. Apart from the metrics themselves so both sides name them once.

/** `quotaplane_webhook_deliveries_total{outcome}`: webhook delivery attempts, by {@link WEBHOOK_DELIVERY_OUTCOMES}. */
export const WEBHOOK_DELIVERIES_TOTAL = 'quotaplane_webhook_deliveries_total';

/** `quotaplane_webhook_oldest_undelivered_seconds`: age in seconds of the oldest event not yet delivered to its endpoint. */
export const WEBHOOK_OLDEST_UNDELIVERED_SECONDS = 'quotaplane_webhook_oldest_undelivered_seconds';

/** Every webhook metric name the dashboard and alert rules may use. */
export const WEBHOOK_METRIC_NAMES: readonly string[] = Object.freeze([WEBHOOK_DELIVERIES_TOTAL, WEBHOOK_OLDEST_UNDELIVERED_SECONDS]);

/**
 * The `outcome` label values of {@link WEBHOOK_DELIVERIES_TOTAL}: `delivered` (the endpoint
 * acknowledged it), `failed_attempt` (one attempt failed, another will follow), `undeliverable`
 * (attempts given up on).
 */
export const WEBHOOK_DELIVERY_OUTCOMES: readonly string[] = Object.freeze(['delivered', 'failed_attempt', 'undeliverable']);
