import { describe, expect, it } from 'vitest';

import { parseCallCeilingOptions, type CallCeilingPlane } from '../../src/adapters/call-ceiling.js';
import { QuotaError } from '../../src/core/errors.js';

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
