import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { judgePrunable, type PruneFacts } from './prunable.js';
import { CLOSED_RUN_STATUSES, RUN_STATUSES, type RunStatus } from './types.js';

// The retention rule on its own (docs/design/rules.md#r1, #r9): which run a prune may remove at a
// cut-off, and the reason it gives for each one it keeps.

const CUT_OFF_MS = 1_767_600_000_000; // 2026-01-05T08:00:00Z

/** A concluded run closed at the cut-off that holds nothing and has every pass settled. */
const idle: PruneFacts = { status: 'concluded', closedAtMs: CUT_OFF_MS, holdsSlot: false, holdsHold: false, hasUnsettledPass: false };

const OPEN_STATUSES = RUN_STATUSES.filter((status) => !CLOSED_RUN_STATUSES.includes(status));

describe('R1 a run may be pruned exactly when it is closed at or before the cut-off, holds no slot and no hold, and has every pass settled', () => {
  it.each(CLOSED_RUN_STATUSES)('a %s run closed at the cut-off itself, holding nothing, may be pruned', (status) => {
    expect(judgePrunable({ ...idle, status }, CUT_OFF_MS)).toEqual({ prunable: true });
    expect(judgePrunable({ ...idle, status, closedAtMs: CUT_OFF_MS - 1 }, CUT_OFF_MS)).toEqual({ prunable: true });
  });

  it.each(OPEN_STATUSES)('a %s run is open, however old', (status) => {
    expect(judgePrunable({ ...idle, status, closedAtMs: 0 }, CUT_OFF_MS)).toEqual({ prunable: false, reason: 'open' });
  });

  it('a run closed one millisecond after the cut-off stays', () => {
    expect(judgePrunable({ ...idle, closedAtMs: CUT_OFF_MS + 1 }, CUT_OFF_MS)).toEqual({ prunable: false, reason: 'closed-after-cut-off' });
  });

  it('a closed run still holding a slot stays', () => {
    expect(judgePrunable({ ...idle, holdsSlot: true }, CUT_OFF_MS)).toEqual({ prunable: false, reason: 'holds-slot' });
  });

  it('a closed run still holding a hold stays', () => {
    expect(judgePrunable({ ...idle, holdsHold: true }, CUT_OFF_MS)).toEqual({ prunable: false, reason: 'holds-hold' });
  });

  it('a concluded run with a pass never settled stays', () => {
    expect(judgePrunable({ ...idle, hasUnsettledPass: true }, CUT_OFF_MS)).toEqual({ prunable: false, reason: 'pass-unsettled' });
  });

  it('the first reason in order is the one given: open, then closed after the cut-off, slot, hold, unsettled pass', () => {
    const everything: PruneFacts = { status: 'running', closedAtMs: CUT_OFF_MS + 1, holdsSlot: true, holdsHold: true, hasUnsettledPass: true };
    expect(judgePrunable(everything, CUT_OFF_MS)).toEqual({ prunable: false, reason: 'open' });
    expect(judgePrunable({ ...everything, status: 'released' }, CUT_OFF_MS)).toEqual({ prunable: false, reason: 'closed-after-cut-off' });
    expect(judgePrunable({ ...everything, status: 'released', closedAtMs: CUT_OFF_MS }, CUT_OFF_MS)).toEqual({ prunable: false, reason: 'holds-slot' });
    expect(judgePrunable({ ...idle, holdsHold: true, hasUnsettledPass: true }, CUT_OFF_MS)).toEqual({ prunable: false, reason: 'holds-hold' });
  });
});

describe('R9 a released run whose pass never settled is kept by every prune', () => {
  it('kept at any cut-off, and prunable once the pass is settled', () => {
    const released: PruneFacts = { ...idle, status: 'released', closedAtMs: 0, hasUnsettledPass: true };
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (cutOffMs) => {
        expect(judgePrunable(released, cutOffMs)).toEqual({ prunable: false, reason: 'pass-unsettled' });
        expect(judgePrunable({ ...released, hasUnsettledPass: false }, cutOffMs)).toEqual({ prunable: true });
      }),
    );
  });
});

const facts = fc.record<PruneFacts>({
  status: fc.constantFrom<RunStatus>(...RUN_STATUSES),
  closedAtMs: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  holdsSlot: fc.boolean(),
  holdsHold: fc.boolean(),
  hasUnsettledPass: fc.boolean(),
});

describe('R1 properties', () => {
  it('a run prunable at a cut-off is prunable at every later one, and a run kept is kept at every earlier one', () => {
    fc.assert(
      fc.property(facts, fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.nat(1_000_000_000), (run, cutOffMs, laterByMs) => {
        if (judgePrunable(run, cutOffMs).prunable) expect(judgePrunable(run, cutOffMs + laterByMs).prunable).toBe(true);
        else expect(judgePrunable(run, cutOffMs - laterByMs).prunable).toBe(false);
      }),
    );
  });

  it('a run is prunable only when nothing live hangs on it: any slot, hold or unsettled pass keeps it', () => {
    fc.assert(
      fc.property(facts, fc.integer({ min: 0, max: 4_102_444_800_000 }), (run, cutOffMs) => {
        const verdict = judgePrunable(run, cutOffMs);
        const live = run.holdsSlot || run.holdsHold || run.hasUnsettledPass;
        const closed = CLOSED_RUN_STATUSES.includes(run.status) && run.closedAtMs <= cutOffMs;
        expect(verdict.prunable).toBe(closed && !live);
      }),
    );
  });
});
