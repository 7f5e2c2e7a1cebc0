import { Counter, type Registry } from 'prom-client';

import { hasOverrun } from '../core/overrun.js';
import type { SettleResult } from '../plane/plane.js';

/**
 * `quotaplane_overruns_total{unit}` (docs/design/rules.md#l90): passes newly settled for more than their
 * hold, counted once per unit that ran over (`tokens`, `minor_units`), so an alert can fire on any
 * increase. An identical retry (`already-settled`) is not counted again. Labels are bounded: no
 * tenant or run (those are in `attention` as `run.overran`).
 */
export function createOverrunCounter(registry: Registry, prefix: string): (result: SettleResult) => void {
  const overruns = new Counter({
    name: `${prefix}overruns_total`,
    help: 'Passes newly settled for more than the hold they were granted, by unit that ran over.',
    labelNames: ['unit'] as const,
    registers: [registry],
  });
  overruns.inc({ unit: 'tokens' }, 0);
  overruns.inc({ unit: 'minor_units' }, 0);
  return (result) => {
    if (result.outcome !== 'settled' || !hasOverrun(result.overrun)) return;
    if (result.overrun.tokens > 0) overruns.inc({ unit: 'tokens' });
    if (result.overrun.minorUnits > 0) overruns.inc({ unit: 'minor_units' });
  };
}
