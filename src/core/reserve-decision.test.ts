import fc from 'fast-check';
import { expect, it } from 'vitest';
import type { TenantQuota } from './quota.js';
import { concurrencyRefusal } from './reserve-decision.js';

it('ceiling 0 refuses a new run with running 0', () => {
  expect(concurrencyRefusal('acme', { period: 'monthly', maxConcurrentRuns: 0 }, { slotHeld: false, running: 0 })).toEqual({
    code: 'TooManyRuns',
    tenant: 'acme',
    running: 0,
    limit: 0,
    bound: 'tenant',
  });
});

it('G1 (pure) ceiling 1: the first run fits, a second is refused with running 1', () => {
  const quota = { period: 'monthly', maxConcurrentRuns: 1 } as const;
  expect(concurrencyRefusal('acme', quota, { slotHeld: false, running: 0 })).toBeNull();
  expect(concurrencyRefusal('acme', quota, { slotHeld: false, running: 1 })).toMatchObject({ running: 1, limit: 1 });
});

it('reports the full running count, even above the ceiling', () => {
  expect(concurrencyRefusal('acme', { period: 'daily', maxConcurrentRuns: 4 }, { slotHeld: false, running: 7 })).toMatchObject({
    running: 7,
    limit: 4,
  });
});

it('an absent ceiling never refuses', () => {
  expect(concurrencyRefusal('acme', { period: 'monthly' }, { slotHeld: false, running: 1_000_000 })).toBeNull();
});

it('a run that already holds a slot is never refused, and otherwise refusal is exactly running ≥ ceiling', () => {
  const ceiling = fc.option(fc.nat({ max: 20 }), { nil: undefined });
  fc.assert(
    fc.property(ceiling, fc.nat({ max: 40 }), fc.boolean(), (limit, running, slotHeld) => {
      const quota: TenantQuota = limit === undefined ? { period: 'monthly' } : { period: 'monthly', maxConcurrentRuns: limit };
      const refusal = concurrencyRefusal('t', quota, { slotHeld, running });
      const refused = !slotHeld && limit !== undefined && running >= limit;
      expect(refusal).toEqual(refused ? { code: 'TooManyRuns', tenant: 't', running, limit, bound: 'tenant' } : null);
    }),
  );
  expect(concurrencyRefusal('acme', { period: 'monthly', maxConcurrentRuns: 0 }, { slotHeld: true, running: 3 })).toBeNull();
});
