import type { SliceMeter } from './bench-types.js';

/** Counters summed over the slices one contender ran in (see {@link SliceMeter}). */
export type Counters = Record<string, number>;

/**
 * Runs `slice` between two readings of `meter` (when there is one) and adds the differences to
 * `into`; a counter missing from either reading is left out. Answers what `slice` answered.
 */
export async function metered<T>(meter: SliceMeter | undefined, into: Counters, slice: () => Promise<T>): Promise<T> {
  if (meter === undefined) return slice();
  const before = await meter.read();
  const result = await slice();
  const after = await meter.read();
  for (const [name, value] of Object.entries(after)) {
    const start = before[name];
    if (start !== undefined) into[name] = (into[name] ?? 0) + value - start;
  }
  return result;
}
