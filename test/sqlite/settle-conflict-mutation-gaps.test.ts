import { describe, expect, it } from 'vitest';

import { QuotaError } from '../../src/core/errors.js';
import { openStore } from '../../src/store/open-store.js';

// A receipt retried with a different payload is CONFLICT naming the pass (docs/design/rules.md#l22).

describe('SQLite settle: a conflicting retry', () => {
  it('is CONFLICT with the tenant, run and epoch in its details, and changes nothing', async () => {
    const store = await openStore('sqlite::memory:');
    try {
      const handle = store.tenant('acme');
      const receipt = { run: 'run-a', epoch: 2, period: '2026-01', spend: { tokens: 5, minorUnits: 1 }, releaseSlot: false, concludes: false };
      expect(await handle.settle(receipt)).toBe('settled');
      const caught = await handle.settle({ ...receipt, spend: { tokens: 6, minorUnits: 1 } }).catch((error: unknown) => error);
      expect(caught).toBeInstanceOf(QuotaError);
      expect(caught).toMatchObject({ code: 'CONFLICT', details: { tenant: 'acme', run: 'run-a', epoch: 2 } });
      expect((caught as QuotaError).message).toBe('quota pass run-a/2 was settled already with a different payload; the first receipt stands and nothing changed (a retry must repeat that settle exactly)');
      expect(await handle.spent('2026-01')).toEqual({ tokens: 5, minorUnits: 1 });
      expect(await handle.settle(receipt)).toBe('already-settled');
    } finally {
      await store.close();
    }
  });
});
