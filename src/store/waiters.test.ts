import { describe, expect, it } from 'vitest';

import { QuotaError } from '../core/errors.js';
import type { TooManyRunsRefusal } from '../core/refusal.js';
import { requireWaitTerms, timedOutRefusal, waiterRequest, waiterRequestJson } from './waiters.js';

// The backend-neutral rules of waiting admissions: what a waiter
// row keeps of its admission and how it is read back, the wait terms, and the timed-out refusal.

const AT_MS = 1_767_225_600_000; // 2026-01-01T00:00:00.000Z

function thrown(action: () => unknown): QuotaError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(QuotaError);
    return error as QuotaError;
  }
  throw new Error('expected a QuotaError, but nothing was thrown');
}

describe('the waiter row: an admission kept without its instant', () => {
  it('keeps every field of the admission (absent optional ones as null) and reads it back at the collect instant', () => {
    const full = {
      run: 'r1',
      agent: { name: 'refund-bot', digest: 'ab'.repeat(32) },
      chain: ['alice', 'svc'],
      budget: { maxTokens: 1000, maxCallTokens: 10 },
      width: 2,
      atMs: AT_MS,
      leaseMs: 30_000,
      quota: { period: 'daily' as const, maxConcurrentRuns: 3 },
    };
    const json = waiterRequestJson(full);
    expect(JSON.parse(json)).toEqual({
      run: 'r1',
      agent: { name: 'refund-bot', digest: 'ab'.repeat(32) },
      chain: ['alice', 'svc'],
      budget: { maxTokens: 1000, maxCallTokens: 10 },
      width: 2,
      leaseMs: 30_000,
      quota: { period: 'daily', maxConcurrentRuns: 3 },
    });
    const back = waiterRequest('acme', json, AT_MS + 5_000);
    expect(back).toMatchObject({ ...full, atMs: AT_MS + 5_000 });

    const bare = { run: 'r2', budget: {}, width: 0, atMs: AT_MS, leaseMs: 1 };
    const bareJson = waiterRequestJson(bare);
    expect(JSON.parse(bareJson)).toEqual({ run: 'r2', agent: null, chain: null, budget: {}, width: 0, leaseMs: 1, quota: null });
    expect(waiterRequest('acme', bareJson, AT_MS + 1)).toEqual({
      run: 'r2',
      agent: undefined,
      chain: undefined,
      budget: {},
      width: 0,
      atMs: AT_MS + 1,
      leaseMs: 1,
      quota: undefined,
    });
  });

  it('an unreadable row is STORE_CORRUPT naming the tenant and why, never an INVALID_ARGUMENT of the caller', () => {
    const notJson = thrown(() => waiterRequest('acme', '{not json', AT_MS));
    expect(notJson.code).toBe('STORE_CORRUPT');
    expect(notJson.message).toMatch(/^tenant 'acme' has an unreadable waiter row \(.+\); the store refuses rather than act on a row it cannot read$/);
    expect(notJson.details).toEqual({ tenant: 'acme' });

    const badWidth = thrown(() => waiterRequest('acme', JSON.stringify({ run: 'r1', budget: {}, width: -1, leaseMs: 1 }), AT_MS));
    expect(badWidth.code).toBe('STORE_CORRUPT');
    expect(badWidth.message).toContain('an unreadable waiter row (width: must be a non-negative integer');

    const badBudget = thrown(() => waiterRequest('acme', JSON.stringify({ run: 'r1', budget: 'lots', width: 1, leaseMs: 1 }), AT_MS));
    expect(badBudget.code).toBe('STORE_CORRUPT');
    expect(badBudget.message).toContain('an unreadable waiter row (budget');
  });
});

describe('the wait terms', () => {
  it('answers untilMs and leaseMs; a lease of 1 ms is the shortest', () => {
    expect(requireWaitTerms({ untilMs: AT_MS, leaseMs: 1 })).toEqual({ untilMs: AT_MS, leaseMs: 1 });
    expect(requireWaitTerms({ untilMs: 0, leaseMs: 10_000 })).toEqual({ untilMs: 0, leaseMs: 10_000 });
  });

  it('a lease of 0 or over 24 hours is refused (the one lease rule); a bad instant or lease is named; the terms are an object', () => {
    const zero = thrown(() => requireWaitTerms({ untilMs: AT_MS, leaseMs: 0 }));
    expect([zero.code, zero.details.field, zero.message]).toEqual([
      'INVALID_ARGUMENT',
      'wait.leaseMs',
      'wait.leaseMs: must be an integer number of milliseconds from 1 to 86400000 (24 hours); heartbeat to keep a pass longer, got 0',
    ]);
    expect(thrown(() => requireWaitTerms({ untilMs: AT_MS, leaseMs: 86_400_001 })).details.field).toBe('wait.leaseMs');
    expect(thrown(() => requireWaitTerms({ untilMs: AT_MS, leaseMs: -5 })).details.field).toBe('wait.leaseMs');
    expect(thrown(() => requireWaitTerms({ untilMs: -1, leaseMs: 1 })).details.field).toBe('wait.untilMs');
    expect(thrown(() => requireWaitTerms('soon')).details.field).toBe('wait');
  });
});

describe('W5 the refusal of a waiter whose time ran out', () => {
  const decided: TooManyRunsRefusal = { code: 'TooManyRuns', tenant: 'acme', running: 2, limit: 2, bound: 'tenant' };

  it('is the refusal decided now, with its place in the queue and how long it waited', () => {
    expect(timedOutRefusal(decided, 3, 1_500)).toEqual({ ...decided, queuePosition: 3, waitedMs: 1_500 });
    expect(timedOutRefusal(decided, 1, 0).waitedMs).toBe(0);
  });

  it('never reports a negative wait (a clock that stepped back between join and collect)', () => {
    expect(timedOutRefusal(decided, 1, -250).waitedMs).toBe(0);
  });
});
