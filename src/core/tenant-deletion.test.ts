import { describe, expect, it } from 'vitest';

import { QuotaError } from './errors.js';
import { tenantDeletionAudit, tenantDeletionRefusal, type TenantDeletionBlockers } from './tenant-deletion.js';

const NONE: TenantDeletionBlockers = { running: 0, slots: 0, holds: 0, unsettledPasses: 0, waiting: 0, uncollected: 0, openCalls: 0 };

describe('L95.4: what stands in the way of deleting a tenant', () => {
  it('nothing: no refusal', () => {
    expect(tenantDeletionRefusal('acme', NONE)).toBeNull();
  });

  it.each([
    ['running', { running: 1, slots: 1 }, /1 running run\(s\)/],
    ['a slot of a raw reserve', { slots: 2 }, /2 slot\(s\) held/],
    ['holds', { holds: 3 }, /3 hold\(s\) of spend not yet given back: .*quotaplane reservations/],
    ['unsettled passes', { unsettledPasses: 1 }, /1 pass\(es\) whose spend is not booked/],
    ['waiting admissions', { waiting: 4 }, /4 admission\(s\) waiting/],
    ['refusals not yet collected', { uncollected: 2 }, /2 admission\(s\) granted or refused in the queue whose caller has not come back for the answer yet/],
    ['model calls in flight', { openCalls: 3 }, /3 model call\(s\) in flight: release them \(quotaplane calls open acme lists them, quotaplane calls release acme <callId> frees one\), or wait for their deadline/],
  ] as const)('%s: CONFLICT naming the count and what ends it, the counts in details', (_name, counts, message) => {
    const blockers = { ...NONE, ...counts };
    const refusal = tenantDeletionRefusal('acme', blockers);
    expect(refusal).toBeInstanceOf(QuotaError);
    expect(refusal?.code).toBe('CONFLICT');
    expect(refusal?.message).toMatch(/^tenant 'acme' cannot be deleted yet: /);
    expect(refusal?.message).toMatch(message);
    expect(refusal?.details).toEqual({ tenant: 'acme', ...blockers });
  });

  it('running runs holding their slots are named once, as running', () => {
    expect(tenantDeletionRefusal('acme', { ...NONE, running: 2, slots: 2 })?.message).not.toMatch(/slot/);
    expect(tenantDeletionRefusal('acme', { ...NONE, running: 2, slots: 3 })?.message).toMatch(/3 slot\(s\) held/);
    // A running run whose slot is already gone names no slot.
    expect(tenantDeletionRefusal('acme', { ...NONE, running: 1, slots: 0 })?.message).not.toMatch(/slot/);
  });
});

describe('L95.5: the deletion’s audit row', () => {
  it('is tenant.delete with the reason, the quota it had and the keys it deleted', () => {
    const by = { actor: 'ops', basis: 'asserted' } as const;
    expect(tenantDeletionAudit({ atMs: 5, by, reason: 'left', quota: undefined, keys: ['k1'] })).toEqual({
      atMs: 5,
      by,
      action: 'tenant.delete',
      subject: 'tenant',
      detail: { reason: 'left', quota: null, keys: ['k1'] },
    });
  });
});
