import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

/** How to draw tenants: `count` of them, rank k weighted `1 / k^exponent`, from a seeded generator. */
export interface ZipfOptions {
  /** Number of choices, at least 1. */
  readonly count: number;
  /** Zipf exponent `s` (> 0); 1 is the classic Zipf law, larger concentrates on the first ranks. */
  readonly exponent: number;
  /** Seed of the generator (a 32-bit integer); the same seed always draws the same sequence. */
  readonly seed: number;
}

/**
 * A seeded Zipf sampler over ranks `0 … count−1`: rank `k` (0-based) is drawn with probability
 * proportional to `1 / (k+1)^exponent`. The sequence depends only on the options, so two replays
 * with the same `--seed` give every row the same tenant. Uses pure-rand's xoroshiro128+ and its
 * 53-bit uniform double; the inverse CDF is a binary search over precomputed cumulative weights.
 */
export function zipfSampler(options: ZipfOptions): () => number {
  const { count, exponent, seed } = options;
  if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`count must be a positive integer, got ${count}`);
  if (!Number.isFinite(exponent) || exponent <= 0) throw new RangeError(`exponent must be > 0, got ${exponent}`);
  const cumulative = new Float64Array(count);
  let total = 0;
  for (let rank = 0; rank < count; rank += 1) {
    total += 1 / (rank + 1) ** exponent;
    cumulative[rank] = total;
  }
  const rng = xoroshiro128plus(seed | 0);
  return () => {
    const target = uniformFloat64(rng) * total;
    let low = 0;
    let high = count - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((cumulative[middle] as number) > target) high = middle;
      else low = middle + 1;
    }
    return low;
  };
}
