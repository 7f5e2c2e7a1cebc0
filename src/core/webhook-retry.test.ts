import { describe, expect, it } from 'vitest';

import { webhookBody } from './webhook-payload.js';
import {
  afterFailedAttempt,
  endpointReceives,
  isDeliveredStatus,
  isDeliveryDue,
  retryCeilingMs,
  rotateSecrets,
  signingSecrets,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_MAX_RETRY_MS,
  WEBHOOK_MIN_RETRY_MS,
} from './webhook-retry.js';

describe('webhook delivery rules (docs/design/rules.md#h1–#h12)', () => {
  it('H1 a plane-wide endpoint receives every event, a tenant endpoint only its tenant’s, and only the types it names', () => {
    const plane = { tenant: null, eventTypes: null };
    const acme = { tenant: 'acme', eventTypes: ['halt.set'] };
    expect(endpointReceives(plane, { tenant: null, type: 'halt.set' })).toBe(true);
    expect(endpointReceives(plane, { tenant: 'globex', type: 'run.overran' })).toBe(true);
    expect(endpointReceives(acme, { tenant: 'acme', type: 'halt.set' })).toBe(true);
    expect(endpointReceives(acme, { tenant: 'acme', type: 'halt.lifted' })).toBe(false);
    expect(endpointReceives(acme, { tenant: 'globex', type: 'halt.set' })).toBe(false);
    expect(endpointReceives(acme, { tenant: null, type: 'halt.set' })).toBe(false);
  });

  it('H2 the body is type, ISO timestamp of atMs and data with tenant and seq, the same bytes every time', () => {
    const event = { id: 'evt_1', seq: 7, type: 'halt.set' as const, tenant: 'acme', atMs: Date.UTC(2026, 0, 5), data: { reason: 'x' } };
    const body = webhookBody(event);
    expect(JSON.parse(body)).toEqual({ type: 'halt.set', timestamp: '2026-01-05T00:00:00.000Z', data: { reason: 'x', tenant: 'acme', seq: 7 } });
    expect(webhookBody(event)).toBe(body);
  });

  it('H3 only a 2xx status counts as delivered', () => {
    expect([199, 200, 204, 299, 300, 301, 404, 500].map(isDeliveredStatus)).toEqual([false, true, true, true, false, false, false, false]);
  });

  it('H4 the delay ceiling doubles from 30 s to a 6 h cap, and the delay is drawn with full jitter under it, at least 1 s', () => {
    expect([1, 2, 3, 10, 11, 15].map(retryCeilingMs)).toEqual([30_000, 60_000, 120_000, 15_360_000, WEBHOOK_MAX_RETRY_MS, WEBHOOK_MAX_RETRY_MS]);
    expect(afterFailedAttempt(3, 0.5)).toEqual({ retry: true, delayMs: 60_000 });
    expect(afterFailedAttempt(3, 0)).toEqual({ retry: true, delayMs: WEBHOOK_MIN_RETRY_MS });
    const top = afterFailedAttempt(3, 0.999_999_999);
    expect(top.retry && top.delayMs).toBeLessThan(120_000);
    expect(afterFailedAttempt(100, 0.5)).toEqual({ retry: false });
  });

  it('H5 a delivery gets 16 attempts, spread over about a day on average and 38.5 h at most', () => {
    expect(afterFailedAttempt(WEBHOOK_MAX_ATTEMPTS - 1, 0.5).retry).toBe(true);
    expect(afterFailedAttempt(WEBHOOK_MAX_ATTEMPTS, 0.5).retry).toBe(false);
    let worstMs = 0;
    for (let failed = 1; failed < WEBHOOK_MAX_ATTEMPTS; failed += 1) worstMs += retryCeilingMs(failed);
    expect(worstMs / 3_600_000).toBeCloseTo(38.5, 0);
    expect(worstMs / 2 / 3_600_000).toBeGreaterThan(12);
  });

  it('H6 a delivery is due when pending and its due instant has come; H7 a claimed one (due at its claim’s end) is not', () => {
    expect(isDeliveryDue({ status: 'pending', dueAtMs: 100 }, 100)).toBe(true);
    expect(isDeliveryDue({ status: 'pending', dueAtMs: 101 }, 100)).toBe(false);
    expect(isDeliveryDue({ status: 'failed', dueAtMs: 0 }, 100)).toBe(false);
    expect(isDeliveryDue({ status: 'delivered', dueAtMs: 0 }, 100)).toBe(false);
  });

  it('H9 every unexpired secret signs, newest first; H10 a rotation keeps the old ones until the overlap ends', () => {
    const first = [{ secret: 'whsec_old', addedAtMs: 0, expiresAtMs: null }];
    const rotated = rotateSecrets(first, 'whsec_new', 1_000, 60_000);
    expect(signingSecrets(rotated, 1_000).map((one) => one.secret)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(rotated, 60_999).map((one) => one.secret)).toEqual(['whsec_new', 'whsec_old']);
    expect(signingSecrets(rotated, 61_000).map((one) => one.secret)).toEqual(['whsec_new']);
    // A second rotation never lengthens an overlap, and drops what already expired.
    const again = rotateSecrets(rotated, 'whsec_third', 2_000, 3_600_000);
    expect(again.map((one) => [one.secret, one.expiresAtMs])).toEqual([
      ['whsec_third', null],
      ['whsec_new', 3_602_000],
      ['whsec_old', 61_000],
    ]);
    expect(rotateSecrets(first, 'whsec_now', 5, 0).map((one) => one.secret)).toEqual(['whsec_now']);
  });
});
