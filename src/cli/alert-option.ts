import { Option } from 'commander';

import { parseAlertThresholds, thresholdLabel, type AlertThreshold } from '../core/alert-thresholds.js';
import { UsageError } from './usage-error.js';

/*
 * `--alert`, the spend-alert thresholds of a quota or of the plane-wide default
 * (docs/design/rules.md#e2), repeatable: `80%`, `tokens=50000`, `minorUnits=2000`, or `none` (no
 * alerts). `quota update` and `quota plane update` also take `default` (inherit again).
 */

const FORMS = '80% (of the ceiling), tokens=<n>, minorUnits=<n>, none';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The `--alert` option; `withDefault` adds the `default` form (a merge patch removes the list). */
export function alertOption(withDefault: boolean): Option {
  const forms = withDefault ? `${FORMS} or default (inherit)` : FORMS;
  return new Option('--alert <threshold>', `a spend-alert threshold (repeatable): ${forms}`).argParser(collect).default([]);
}

/**
 * The thresholds `values` name: `undefined` when none was given, `null` for `default` (only where
 * allowed), `[]` for `none`, else the list validated as a quota's. A value of another form is a
 * usage error naming it and the forms.
 */
export function alertThresholdsOf(values: readonly string[], withDefault: boolean): AlertThreshold[] | null | undefined {
  if (values.length === 0) return undefined;
  if (values.length === 1 && values[0] === 'none') return [];
  if (withDefault && values.length === 1 && values[0] === 'default') return null;
  const parsed = values.map((value) => {
    const percent = /^(\d+)%$/.exec(value);
    if (percent !== null) return { percent: Number(percent[1]) };
    const amount = /^(tokens|minorUnits)=(\d+)$/.exec(value);
    if (amount !== null) return amount[1] === 'tokens' ? { tokens: Number(amount[2]) } : { minorUnits: Number(amount[2]) };
    throw new UsageError(`--alert ${JSON.stringify(value)} is not a threshold; use ${FORMS}${withDefault ? ' or default' : ''} (none and default stand alone)`);
  });
  return parseAlertThresholds(parsed, '--alert');
}

/** How a quota's thresholds read in text: `80%, 100%`, `none`, or `inherited` when unset. */
export function alertThresholdsText(thresholds: readonly AlertThreshold[] | undefined): string {
  if (thresholds === undefined) return 'inherited (the plane-wide default, else 80%, 100%)';
  return thresholds.length === 0 ? 'none' : thresholds.map(thresholdLabel).join(', ');
}
