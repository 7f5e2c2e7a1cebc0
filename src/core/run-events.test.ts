import { describe, expect, it } from 'vitest';

import { eventKey } from './events.js';
import { haltLiftedEvent, haltSetEvent, overrunEvent, strandedEvent } from './run-events.js';

// The events of runs and halts (docs/design/rules.md#e6): what each says, and the key that makes it once.

const ALICE = { actor: 'ops-alice', basis: 'asserted' } as const;
const HALT = { scope: { kind: 'agent', name: 'bot' } as const, reason: 'loop', by: ALICE, atMs: 100, reachesRunning: true };

describe('run and halt events (E6)', () => {
  it('halt.set is keyed by the tenant, the scope and the instant it was thrown at', () => {
    expect(haltSetEvent('acme', HALT)).toEqual({
      key: eventKey('halt.set', 'acme', 'agent:bot', 100),
      type: 'halt.set',
      tenant: 'acme',
      atMs: 100,
      data: { scope: 'agent:bot', reason: 'loop', by: ALICE, thrownAtMs: 100, reachesRunning: true },
    });
    expect(haltSetEvent(null, { ...HALT, scope: { kind: 'plane' }, reachesRunning: undefined }).data).toMatchObject({ scope: 'plane', reachesRunning: false });
  });

  it('halt.lifted is keyed like the throw it ends, at the lift instant when known', () => {
    const lifted = haltLiftedEvent('acme', HALT, { atMs: 250, by: { actor: 'ops-bob', basis: 'authenticated' } });
    expect(lifted).toEqual({
      key: eventKey('halt.lifted', 'acme', 'agent:bot', 100),
      type: 'halt.lifted',
      tenant: 'acme',
      atMs: 250,
      data: { scope: 'agent:bot', reason: 'loop', by: ALICE, thrownAtMs: 100, reachesRunning: true, liftedBy: { actor: 'ops-bob', basis: 'authenticated' }, liftedAtMs: 250 },
    });
    expect(haltLiftedEvent(null, HALT, undefined)).toMatchObject({ tenant: null, atMs: 100, data: { liftedBy: null, liftedAtMs: null } });
  });

  it('run.overran and run.stranded are keyed by the pass', () => {
    const spend = { tokens: 9, minorUnits: 0 };
    expect(overrunEvent('acme', 'r1', 2, 'bot', '2026-01', { tokens: 5, minorUnits: 0 }, spend, { tokens: 4, minorUnits: 0 }, 7)).toEqual({
      key: eventKey('run.overran', 'acme', 'r1', 2),
      type: 'run.overran',
      tenant: 'acme',
      atMs: 7,
      data: { run: 'r1', epoch: 2, agent: 'bot', period: '2026-01', hold: { tokens: 5, minorUnits: 0 }, spend, overrun: { tokens: 4, minorUnits: 0 } },
    });
    expect(strandedEvent('acme', 'r1', 3, 50, 60)).toEqual({ key: eventKey('run.stranded', 'acme', 'r1', 3), type: 'run.stranded', tenant: 'acme', atMs: 60, data: { run: 'r1', epoch: 3, leaseExpiredAtMs: 50 } });
  });
});
