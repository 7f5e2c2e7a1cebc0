import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { CompletionQueue, type PendingCompletion } from '../../src/cli/replay/completion-queue.js';
import { zipfSampler } from '../../src/cli/replay/zipf.js';

function draw(count: number, exponent: number, seed: number, n: number): number[] {
  const next = zipfSampler({ count, exponent, seed });
  return Array.from({ length: n }, () => next());
}

describe('zipf tenant choice', () => {
  it('draws the same sequence for the same seed and a different one for another seed', () => {
    expect(draw(20, 1, 1, 500)).toEqual(draw(20, 1, 1, 500));
    expect(draw(20, 1, 1, 500)).not.toEqual(draw(20, 1, 2, 500));
  });

  it('stays within 0 … count−1 and always answers 0 for one choice', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.double({ min: 0.1, max: 3, noNaN: true }), fc.nat(), (count, s, seed) => {
        for (const rank of draw(count, s, seed, 50)) {
          expect(Number.isInteger(rank) && rank >= 0 && rank < count).toBe(true);
        }
      }),
    );
    expect(new Set(draw(1, 1, 7, 100))).toEqual(new Set([0]));
  });

  it('follows the Zipf law: rank k about 1/k as often as rank 1', () => {
    const counts = new Array<number>(5).fill(0);
    const n = 100_000;
    for (const rank of draw(5, 1, 42, n)) counts[rank] = (counts[rank] ?? 0) + 1;
    const harmonic = 1 + 1 / 2 + 1 / 3 + 1 / 4 + 1 / 5;
    counts.forEach((count, rank) => {
      expect(Math.abs(count / n - 1 / (rank + 1) / harmonic)).toBeLessThan(0.01);
    });
  });
});

describe('completion queue', () => {
  it('pops in end-instant order, ties in trace-line order', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ endMs: fc.nat({ max: 50 }), line: fc.nat({ max: 1000 }) })), (items) => {
        const queue = new CompletionQueue();
        const all = items.map(
          (item): PendingCompletion => ({ ...item, tenant: 't', run: 'r', epoch: 1, period: 'p', tokens: 0, minorUnits: 0 }),
        );
        for (const item of all) queue.push(item);
        expect(queue.size).toBe(all.length);
        const popped: PendingCompletion[] = [];
        for (let next = queue.pop(); next !== undefined; next = queue.pop()) popped.push(next);
        const expected = [...all].sort((a, b) => a.endMs - b.endMs || a.line - b.line);
        expect(popped.map((p) => [p.endMs, p.line])).toEqual(expected.map((p) => [p.endMs, p.line]));
        expect(queue.peek()).toBeUndefined();
      }),
    );
  });
});
