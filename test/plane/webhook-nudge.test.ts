import { afterEach, describe, expect, it } from 'vitest';

import { nudgingPlane } from '../../src/plane/webhook-nudge.js';
import { ALICE, memoryPlane, type MemoryPlane } from './plane-fixtures.js';

// H6: the plane nudges an in-process dispatcher after each verb that may write an event.
let m: MemoryPlane | undefined;
afterEach(async () => {
  await m?.close();
  m = undefined;
});

describe('nudgingPlane (H6)', () => {
  it('H6 nudges after a halt, a lift and a settle, also when one throws; an admission or a read does not', async () => {
    m = await memoryPlane();
    let nudges = 0;
    const plane = nudgingPlane(m.plane, () => (nudges += 1));
    const admitted = await plane.admit({ tenant: 'acme', run: 'r1' });
    await plane.halts('acme').catch(() => undefined);
    expect(nudges).toBe(0);
    expect(admitted.ok).toBe(true);
    await plane.settle({ tenant: 'acme', run: 'r1', epoch: 1, spend: { tokens: 1, minorUnits: 0 }, concludes: true });
    await plane.halt({ tenant: 'acme', scope: 'tenant', reason: 'drill', by: ALICE });
    await plane.lift({ tenant: 'acme', scope: 'tenant', by: ALICE });
    expect(nudges).toBe(3);
    await expect(plane.halt({ tenant: 'nobody', scope: 'tenant', reason: 'x', by: ALICE })).rejects.toBeDefined();
    expect(nudges).toBe(4);
  });
});
