import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { checkRate, type RateCheck } from './rate-check.js';
import type { RateCeiling } from './rate.js';

const GRANT = 'tool://conformance/refund';
const T = 1_760_004_000_000;

function rate(ceilings: readonly RateCeiling[], instantsMs: readonly number[], atMs: number): ReturnType<typeof checkRate> {
  return checkRate({ tenant: 'acme', grant: GRANT, ceilings, instantsMs, atMs });
}

/** Independent oracle: instants in the half-open window `(atMs − w·1000, …)`, future rows included. */
function inWindow(instantsMs: readonly number[], windowSeconds: number, atMs: number): number {
  return instantsMs.filter((instant) => instant > atMs - windowSeconds * 1000).length;
}

describe('checkRate (D6, D7)', () => {
  it('D6 3/60 at t over {t−60 s, t−59 s, t−1 s, t+5 s} reaches 3: the start is excluded, the future counted', () => {
    const refusal = rate([{ count: 3, windowSeconds: 60 }], [T - 60_000, T - 59_000, T - 1_000, T + 5_000], T);
    expect(refusal).toMatchObject({
      code: 'RateLimited',
      tenant: 'acme',
      grant: GRANT,
      ceiling: { count: 3, windowSeconds: 60 },
      reached: 3,
    });
  });

  it('D7 a full valid ceiling followed by a window of 0 is UncountableRate: windows are validated before counting', () => {
    const full = { count: 1, windowSeconds: 60 };
    const zero = { count: 5, windowSeconds: 0 };
    expect(rate([full, zero], [T - 1_000, T - 2_000], T)).toEqual({ code: 'UncountableRate', grant: GRANT, ceiling: zero });
  });

  it('names the first uncountable ceiling in list order', () => {
    const wide = { count: 1, windowSeconds: 2_678_401 };
    const zero = { count: 1, windowSeconds: 0 };
    expect(rate([{ count: 9, windowSeconds: 9 }, wide, zero], [], T)).toEqual({
      code: 'UncountableRate',
      grant: GRANT,
      ceiling: wide,
    });
  });

  it('C39 (pure) windows of 2 678 401 s and 0 s are uncountable; 2 678 400 s is counted', () => {
    expect(rate([{ count: 1, windowSeconds: 2_678_401 }], [], T)?.code).toBe('UncountableRate');
    expect(rate([{ count: 1, windowSeconds: 0 }], [], T)?.code).toBe('UncountableRate');
    expect(rate([{ count: 1, windowSeconds: 2_678_400 }], [], T)).toBeNull();
    expect(rate([{ count: 1, windowSeconds: 2_678_400 }], [T - 2_678_400_000 + 1], T)?.code).toBe('RateLimited');
  });

  it('an empty ceiling list has room; a count of 0 never has room', () => {
    expect(rate([], [T, T, T], T)).toBeNull();
    expect(rate([{ count: 0, windowSeconds: 60 }], [], T)).toMatchObject({ code: 'RateLimited', reached: 0 });
  });

  it('reports the true count, which may exceed the ceiling, and the first full ceiling in order', () => {
    const instants = [T - 5_000, T - 4_000, T - 3_000, T - 2_000, T - 1_000];
    expect(rate([{ count: 2, windowSeconds: 60 }], instants, T)).toMatchObject({ reached: 5 });
    expect(
      rate(
        [
          { count: 10, windowSeconds: 60 },
          { count: 3, windowSeconds: 4 },
          { count: 1, windowSeconds: 60 },
        ],
        instants,
        T,
      ),
    ).toMatchObject({ ceiling: { count: 3, windowSeconds: 4 }, reached: 3 });
  });

  it('C35/C36 (pure) 20/3600 around an hour boundary: a burst before it fills the window after it, until it ages out', () => {
    const ceiling = [{ count: 20, windowSeconds: 3600 }];
    const burst = Array.from({ length: 20 }, () => T - 60_000);
    expect(rate(ceiling, burst.slice(1), T - 60_000)).toBeNull();
    expect(rate(ceiling, burst, T + 60_000)).toMatchObject({
      code: 'RateLimited',
      reached: 20,
      retryAtMs: T - 60_000 + 3_600_000,
    });
    expect(rate(ceiling, burst, T - 60_000 + 3_600_000 - 1)?.code).toBe('RateLimited');
    expect(rate(ceiling, burst, T - 60_000 + 3_600_000)).toBeNull();
  });

  it('retryAtMs waits for every full ceiling, not only the one reported', () => {
    const ceilings = [
      { count: 1, windowSeconds: 60 },
      { count: 1, windowSeconds: 3600 },
    ];
    const refusal = rate(ceilings, [T - 10_000], T);
    expect(refusal).toMatchObject({ code: 'RateLimited', ceiling: ceilings[0], retryAtMs: T - 10_000 + 3_600_000 });
    expect(rate(ceilings, [T - 10_000], T - 10_000 + 3_600_000)).toBeNull();
  });

  it('never admits more than count in any window: a simulated stream of attempts', () => {
    const ceiling = fc.record({ count: fc.integer({ min: 1, max: 4 }), windowSeconds: fc.integer({ min: 1, max: 5 }) });
    const gapMs = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 6_000 }));
    fc.assert(
      fc.property(
        fc.array(ceiling, { minLength: 1, maxLength: 3 }),
        fc.array(gapMs, { minLength: 1, maxLength: 80 }),
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        (ceilings, gaps, startMs) => {
          const recorded: number[] = [];
          let atMs = startMs;
          for (const gap of gaps) {
            atMs += gap;
            const answer = rate(ceilings, recorded, atMs);
            // The oracle agrees with every answer: refused exactly when some ceiling's window is full.
            const full = ceilings.some((c) => inWindow(recorded, c.windowSeconds, atMs) >= c.count);
            expect(answer !== null).toBe(full);
            if (answer === null) recorded.push(atMs);
          }
          // The fullest half-open window (t − w, t] ends on a recorded instant, so checking those is enough.
          for (const c of ceilings) {
            for (const endMs of recorded) {
              const held = recorded.filter((instant) => instant > endMs - c.windowSeconds * 1000 && instant <= endMs);
              expect(held.length).toBeLessThanOrEqual(c.count);
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('retryAtMs is the earliest instant at which the same check has room', () => {
    const ceiling = fc.record({ count: fc.integer({ min: 1, max: 5 }), windowSeconds: fc.integer({ min: 1, max: 120 }) });
    // Rows around atMs, including rows stamped in the future by a clock running ahead.
    const offsetMs = fc.integer({ min: -130_000, max: 10_000 });
    fc.assert(
      fc.property(
        fc.array(ceiling, { minLength: 1, maxLength: 3 }),
        fc.array(offsetMs, { maxLength: 30 }),
        (ceilings, offsets) => {
          const instants = offsets.map((offset) => T + offset);
          const input: RateCheck = { tenant: 'acme', grant: GRANT, ceilings, instantsMs: instants, atMs: T };
          const answer = checkRate(input);
          if (answer === null || answer.code !== 'RateLimited') return;
          expect(answer.retryAtMs).toBeGreaterThan(T);
          expect(checkRate({ ...input, atMs: answer.retryAtMs })).toBeNull();
          expect(checkRate({ ...input, atMs: answer.retryAtMs - 1 })).not.toBeNull();
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a count of 0 points retryAtMs one window on, since no instant ever has room', () => {
    expect(rate([{ count: 0, windowSeconds: 60 }], [], T)).toMatchObject({ retryAtMs: T + 60_000 });
  });
});
