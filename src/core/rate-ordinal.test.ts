import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { countedSince, judgeRateBoundaries, rateBoundaryOrdinal, recordedRateInstantMs, type RateBoundary } from './rate-ordinal.js';
import { checkRate } from './rate-check.js';
import { ratePruneFloorMs, type RateCeiling } from './rate.js';

const GRANT = 'tool://payments/refund';
const T = 1_760_000_000_000;

/**
 * Reads, over dispatch instants recorded as the store records them (running maximum), what a
 * store reads: the boundary instant per ceiling and, for the first full one, the first counted
 * ordinal. Rows at or before `prunedAtOrBeforeMs` are gone, as after a prune.
 */
function judgeRecorded(recorded: readonly number[], ceilings: readonly RateCeiling[], atMs: number, prunedAtOrBeforeMs: number) {
  const stored = (ordinal: number): number | null => {
    const instant = recorded[ordinal - 1];
    return instant === undefined || instant <= prunedAtOrBeforeMs ? null : instant;
  };
  const latest = recorded.length;
  const boundaries: RateBoundary[] = ceilings.map((ceiling) => {
    const ordinal = rateBoundaryOrdinal(latest, ceiling);
    return ordinal === null ? null : stored(ordinal);
  });
  const verdict = judgeRateBoundaries({ grant: GRANT, ceilings, boundaries, atMs });
  if (verdict === null || verdict.code === 'UncountableRate') return verdict;
  const startMs = atMs - verdict.ceiling.windowSeconds * 1000;
  const firstIndex = recorded.findIndex((instant, index) => stored(index + 1) !== null && instant > startMs);
  return {
    code: 'RateLimited' as const,
    tenant: 'acme',
    grant: GRANT,
    ceiling: verdict.ceiling,
    reached: countedSince(latest, firstIndex === -1 ? null : firstIndex + 1),
    retryAtMs: verdict.retryAtMs,
  };
}

function record(instants: readonly number[]): number[] {
  const recorded: number[] = [];
  for (const atMs of instants) recorded.push(recordedRateInstantMs(atMs, recorded.at(-1) ?? null));
  return recorded;
}

describe('rate ceilings over numbered dispatches', () => {
  it('records a dispatch at its own instant, or at the latest recorded one when that is later', () => {
    expect(recordedRateInstantMs(T, null)).toBe(T);
    expect(recordedRateInstantMs(T, T - 5)).toBe(T);
    expect(recordedRateInstantMs(T, T + 5)).toBe(T + 5);
  });

  it('the boundary of count C after N dispatches is ordinal N − C + 1, none when fewer than C or C is 0', () => {
    expect(rateBoundaryOrdinal(10, { count: 3, windowSeconds: 60 })).toBe(8);
    expect(rateBoundaryOrdinal(3, { count: 3, windowSeconds: 60 })).toBe(1);
    expect(rateBoundaryOrdinal(2, { count: 3, windowSeconds: 60 })).toBeNull();
    expect(rateBoundaryOrdinal(5, { count: 0, windowSeconds: 60 })).toBeNull();
  });

  it('answers exactly what checkRate answers over the recorded instants: refusal, reached and retryAtMs', () => {
    const ceiling = fc.record({ count: fc.integer({ min: 0, max: 6 }), windowSeconds: fc.integer({ min: 1, max: 120 }) });
    // Dispatches around atMs in any order, as instances with skewed clocks send them.
    const offsetMs = fc.integer({ min: -200_000, max: 10_000 });
    fc.assert(
      fc.property(fc.array(ceiling, { maxLength: 3 }), fc.array(offsetMs, { maxLength: 40 }), fc.integer({ min: -5_000, max: 150_000 }), (ceilings, offsets, laterMs) => {
        const recorded = record(offsets.map((offset) => T + offset));
        const atMs = T + laterMs;
        const expected = checkRate({ tenant: 'acme', grant: GRANT, ceilings, instantsMs: recorded, atMs });
        expect(judgeRecorded(recorded, ceilings, atMs, ratePruneFloorMs(atMs))).toEqual(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('rows pruned below the widest window change no answer, and an uncountable window refuses first', () => {
    const old = T - 40 * 86_400_000;
    const recorded = record([old, old + 1, T - 1000, T - 500]);
    const ceilings = [{ count: 2, windowSeconds: 60 }];
    expect(judgeRecorded(recorded, ceilings, T, ratePruneFloorMs(T))).toEqual(checkRate({ tenant: 'acme', grant: GRANT, ceilings, instantsMs: recorded, atMs: T }));
    expect(judgeRateBoundaries({ grant: GRANT, ceilings: [{ count: 1, windowSeconds: 0 }], boundaries: [], atMs: T })).toEqual({
      code: 'UncountableRate',
      grant: GRANT,
      ceiling: { count: 1, windowSeconds: 0 },
    });
  });

  it('a lagging clock is counted at the latest recorded instant, so it leaves the window no earlier (skew errs toward refusing)', () => {
    // Another instance recorded T + 5 s; this one's clock says T.
    const recorded = record([T + 5000, T]);
    expect(recorded).toEqual([T + 5000, T + 5000]);
    const ceilings = [{ count: 2, windowSeconds: 60 }];
    // At T + 64 s the raw instant T would have left a minute window; the recorded one has not.
    expect(judgeRecorded(recorded, ceilings, T + 64_000, ratePruneFloorMs(T))).toMatchObject({ code: 'RateLimited', reached: 2, retryAtMs: T + 65_000 });
    expect(judgeRecorded(recorded, ceilings, T + 65_000, ratePruneFloorMs(T))).toBeNull();
  });
});

describe('judgeRateBoundaries near the epoch', () => {
  it('a ceiling with no boundary dispatch has room even when its window starts before 1970', () => {
    expect(judgeRateBoundaries({ grant: GRANT, ceilings: [{ count: 1, windowSeconds: 60 }], boundaries: [null], atMs: 1000 })).toBeNull();
  });

  it('a full ceiling is answered as Full with its retry instant', () => {
    expect(judgeRateBoundaries({ grant: GRANT, ceilings: [{ count: 1, windowSeconds: 60 }], boundaries: [500], atMs: 1000 })).toEqual({
      code: 'Full',
      ceiling: { count: 1, windowSeconds: 60 },
      retryAtMs: 60_500,
    });
  });
});
