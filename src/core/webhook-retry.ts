/*
 * The rules of webhook deliveries (docs/design/rules.md#h1–#h12): when a failed attempt is tried
 * again, when a delivery is due, which outcome of an attempt counts as delivered, and which
 * secrets sign an attempt. Pure: every instant and random draw is an argument.
 */

/** The first retry's delay ceiling, in ms (docs/design/rules.md#h4). */
export const WEBHOOK_FIRST_RETRY_MS = 30_000;

/** The largest delay ceiling between two attempts, in ms: 6 hours (docs/design/rules.md#h4). */
export const WEBHOOK_MAX_RETRY_MS = 6 * 3_600_000;

/** The shortest delay between two attempts, in ms, whatever the jitter drew (docs/design/rules.md#h4). */
export const WEBHOOK_MIN_RETRY_MS = 1_000;

/**
 * Attempts a delivery gets before it is `failed` (docs/design/rules.md#h5): 16 attempts, whose 15
 * delay ceilings add up to about 38.5 hours, so with full jitter the attempts span about 19 hours
 * on average, and never more than 38.5.
 */
export const WEBHOOK_MAX_ATTEMPTS = 16;

/** The state of a delivery: waiting for an attempt, answered with a 2xx, or out of attempts. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** Every {@link DeliveryStatus}, in the order a delivery moves through them. */
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = Object.freeze(['pending', 'delivered', 'failed']);

/**
 * The delay ceiling after `failedAttempts` failed attempts (1 or more), in ms: 30 s doubling each
 * time, capped at 6 h (docs/design/rules.md#h4).
 */
export function retryCeilingMs(failedAttempts: number): number {
  const doublings = Math.max(0, Math.min(failedAttempts - 1, 30));
  return Math.min(WEBHOOK_MAX_RETRY_MS, WEBHOOK_FIRST_RETRY_MS * 2 ** doublings);
}

/**
 * What follows the `failedAttempts`-th failed attempt (counting it), given a uniform draw
 * `random` in [0, 1) (docs/design/rules.md#h4, #h5):
 * - `{ retry: true, delayMs }`: try again after `delayMs`, drawn with full jitter from
 *   [0, {@link retryCeilingMs}) and at least {@link WEBHOOK_MIN_RETRY_MS};
 * - `{ retry: false }`: the delivery has had {@link WEBHOOK_MAX_ATTEMPTS} attempts and is `failed`.
 */
export function afterFailedAttempt(failedAttempts: number, random: number): { readonly retry: true; readonly delayMs: number } | { readonly retry: false } {
  if (failedAttempts >= WEBHOOK_MAX_ATTEMPTS) return { retry: false };
  const draw = Number.isFinite(random) ? Math.min(Math.max(random, 0), 1 - Number.EPSILON) : 0;
  return { retry: true, delayMs: Math.max(WEBHOOK_MIN_RETRY_MS, Math.floor(draw * retryCeilingMs(failedAttempts))) };
}

/**
 * Whether a delivery may be attempted at `nowMs` (docs/design/rules.md#h6): it is `pending` and its
 * `dueAtMs` has come. A claimed delivery's `dueAtMs` is its claim's end, so it is not due again
 * while the claim stands (docs/design/rules.md#h7).
 */
export function isDeliveryDue(delivery: { readonly status: DeliveryStatus; readonly dueAtMs: number }, nowMs: number): boolean {
  return delivery.status === 'pending' && delivery.dueAtMs <= nowMs;
}

/** Whether an HTTP status answers an attempt as delivered: 200–299 only (docs/design/rules.md#h3). */
export function isDeliveredStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 200 && status <= 299;
}

/**
 * One signing secret of an endpoint: `secret` (`whsec_` and base64), the instant it was added and
 * the instant from which it no longer signs (`expiresAtMs`, `null`: never), Unix ms.
 */
export interface WebhookSecret {
  readonly secret: string;
  readonly addedAtMs: number;
  readonly expiresAtMs: number | null;
}

/**
 * The secrets that sign an attempt at `nowMs`, newest first: every one not yet expired
 * (docs/design/rules.md#h9).
 */
export function signingSecrets(secrets: readonly WebhookSecret[], nowMs: number): readonly WebhookSecret[] {
  return secrets.filter((one) => one.expiresAtMs === null || one.expiresAtMs > nowMs).sort((a, b) => b.addedAtMs - a.addedAtMs);
}

/**
 * The secrets after a rotation at `nowMs` (docs/design/rules.md#h10): `fresh` is added, every
 * secret still signing now signs until `nowMs + overlapMs` at the latest (an earlier expiry is
 * kept), and those expired by now are dropped. `overlapMs` 0 ends the old secrets at once.
 */
export function rotateSecrets(secrets: readonly WebhookSecret[], fresh: string, nowMs: number, overlapMs: number): readonly WebhookSecret[] {
  const endMs = nowMs + overlapMs;
  const kept =
    overlapMs > 0
      ? signingSecrets(secrets, nowMs).map((one) => ({ ...one, expiresAtMs: one.expiresAtMs === null ? endMs : Math.min(one.expiresAtMs, endMs) }))
      : [];
  return [{ secret: fresh, addedAtMs: nowMs, expiresAtMs: null }, ...kept];
}

/** What an endpoint listens to: its tenant (`null`: every tenant's events and the plane's) and event types (`null`: all). */
export interface WebhookAudience {
  readonly tenant: string | null;
  readonly eventTypes: readonly string[] | null;
}

/**
 * Whether an endpoint receives an event (docs/design/rules.md#h1): a plane-wide endpoint every
 * event, a tenant's endpoint only that tenant's; and only the types it names, when it names any.
 */
export function endpointReceives(endpoint: WebhookAudience, event: { readonly tenant: string | null; readonly type: string }): boolean {
  if (endpoint.tenant !== null && event.tenant !== endpoint.tenant) return false;
  return endpoint.eventTypes === null || endpoint.eventTypes.includes(event.type);
}
