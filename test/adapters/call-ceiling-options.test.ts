import { describe, expect, it } from 'vitest';

import { parseCallCeilingOptions, reserveCeilingCall, type CallCeilingPlane } from '../../src/adapters/call-ceiling.js';
import { QuotaError } from '../../src/core/errors.js';
import { PRICES } from './ai-sdk-scenarios.js';
import { ceilings } from './call-ceiling-fixtures.js';
import { planeTarget } from './run-fixtures.js';

// The ceiling adapters' options are checked when the adapter is made, against the same bounds the
// plane applies to each call, so a bad option fails once at start-up, not on every model call.

const plane: CallCeilingPlane = {
  reserveCall: () => Promise.reject(new Error('not called')),
  adjustCall: () => Promise.reject(new Error('not called')),
  releaseCall: () => Promise.reject(new Error('not called')),
};

function fieldOf(thunk: () => unknown): unknown {
  try {
    thunk();
  } catch (error) {
    expect(error).toBeInstanceOf(QuotaError);
    return (error as QuotaError).details.field;
  }
  return undefined;
}

describe('parseCallCeilingOptions', () => {
  it('refuses a leaseMs the plane would refuse on every call (1 000 … 86 400 000), naming leaseMs', () => {
    expect(fieldOf(() => parseCallCeilingOptions({ plane, tenant: 'acme', leaseMs: 500 }))).toBe('leaseMs');
    expect(fieldOf(() => parseCallCeilingOptions({ plane, tenant: 'acme', leaseMs: 86_400_001 }))).toBe('leaseMs');
    expect(parseCallCeilingOptions({ plane, tenant: 'acme', leaseMs: 1000 }).leaseMs).toBe(1000);
    expect(parseCallCeilingOptions({ plane, tenant: 'acme', leaseMs: 86_400_000 }).leaseMs).toBe(86_400_000);
  });
});

describe('reserveCeilingCall against a minor-unit ceiling', () => {
  it('M11: an unpriced model is refused naming prices and the model, since the caller has no maxMinorUnits to give', async () => {
    const target = await planeTarget();
    try {
      await ceilings(target.plane, { tenant: [{ unit: 'minorUnits', limit: 100_000, period: 'monthly' }] });
      const ceiling = parseCallCeilingOptions({ plane: target.plane, tenant: 'acme', prices: PRICES });
      const error = await reserveCeilingCall(ceiling, 'unpriced-model', 10, 100).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(QuotaError);
      expect((error as QuotaError).details).toMatchObject({ field: 'prices', model: 'unpriced-model' });
      expect((error as QuotaError).message).toMatch(/^prices: has no price for model 'unpriced-model', but a minor-unit ceiling of tenant covers this call.*give prices\["unpriced-model"\]/);
      expect(await target.plane.openCalls({ tenant: 'acme' })).toEqual([]);
    } finally {
      await target.close();
    }
  });
});
