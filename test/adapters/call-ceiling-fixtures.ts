import type { CallCeilings } from '../../src/core/call-ceilings.js';
import type { CallReservation } from '../../src/core/lifecycle/call-books.js';
import type { Plane } from '../../src/plane/plane.js';
import { ManualClock } from '../../src/testing/manual-clock.js';
import { OPS, T0 } from './run-fixtures.js';

/** The clock the adapters measure `retryAfterMs` from, standing where the test plane's does. */
export const CLOCK = new ManualClock(T0);

/** Sets acme's model-call ceilings. */
export async function ceilings(plane: Plane, config: CallCeilings): Promise<void> {
  await plane.setCallCeilings('acme', config, { by: OPS, newTenant: true });
}

/** What acme's tenant meter has booked and holds. */
export async function tenantMeter(plane: Plane): Promise<{ booked: { tokens: number; requests: number; minorUnits: number }; held: { tokens: number; requests: number; minorUnits: number } }> {
  const [tenant] = await plane.callStandings({ tenant: 'acme' });
  if (tenant === undefined) throw new Error('acme has no standings');
  return { booked: { ...tenant.booked }, held: { ...tenant.held } };
}

/** acme's model calls in flight. */
export function openCalls(plane: Plane): Promise<CallReservation[]> {
  return plane.openCalls({ tenant: 'acme' });
}

/** A promise and the function that resolves it. */
export function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
