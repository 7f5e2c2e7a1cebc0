import { describe, requireAmount } from './amounts.js';
import { invalidArgument } from './errors.js';
import { eventKey, type NewEvent } from './events.js';
import type { Spend } from './spend.js';

/*
 * Spend alerts (docs/design/rules.md#e1–#e7): thresholds on a spend ceiling, compared with the
 * period's settled spend, each crossing one event per (tenant, agent, unit, period, threshold).
 */

/**
 * A point on a spend ceiling at which an alert fires: a percentage of the ceiling (`percent`, a
 * whole number 1–1000; over 100 alerts on an overrun past the ceiling) in each unit the ceiling
 * bounds, or an absolute amount in one unit (`tokens`, or `minorUnits`, a safe integer ≥ 1), which
 * applies with or without a ceiling.
 */
export type AlertThreshold = { readonly percent: number } | { readonly tokens: number } | { readonly minorUnits: number };

/** The thresholds of a ceiling nobody configured any for, nor a plane-wide default: 80 % and 100 %. */
export const DEFAULT_ALERT_THRESHOLDS: readonly AlertThreshold[] = Object.freeze([Object.freeze({ percent: 80 }), Object.freeze({ percent: 100 })]);

/** The most thresholds one list may hold. */
export const MAX_ALERT_THRESHOLDS = 16;

/** The largest percentage a threshold may name. */
export const MAX_THRESHOLD_PERCENT = 1000;

/** A unit of spend as the books name it. */
export type BooksUnit = keyof Spend;

const THRESHOLD_SHAPE = '{ percent } (1–1000), { tokens } or { minorUnits } (≥ 1)';

/**
 * Validates an untrusted list of thresholds and returns a copy sorted by what it names (percent
 * first, then tokens, then minor units, each ascending) with duplicates removed. `[]` is kept: no
 * alerts. Throws `INVALID_ARGUMENT` naming the element's field: not an array, more than
 * {@link MAX_ALERT_THRESHOLDS}, an element with other than exactly one member, a percent that is
 * not a whole number 1–1000, an amount that is not a safe integer ≥ 1.
 */
export function parseAlertThresholds(value: unknown, field = 'alertThresholds'): AlertThreshold[] {
  if (!Array.isArray(value)) throw invalidArgument(field, `must be a list of ${THRESHOLD_SHAPE}, got ${describe(value)}`);
  if (value.length > MAX_ALERT_THRESHOLDS) throw invalidArgument(field, `may hold at most ${MAX_ALERT_THRESHOLDS} thresholds, got ${value.length}`);
  const parsed = value.map((element, index) => parseThreshold(element, `${field}[${index}]`));
  const seen = new Set<string>();
  return parsed
    .sort((a, b) => rank(a) - rank(b) || amountOf(a) - amountOf(b))
    .filter((threshold) => {
      const label = thresholdLabel(threshold);
      if (seen.has(label)) return false;
      seen.add(label);
      return true;
    });
}

function parseThreshold(value: unknown, field: string): AlertThreshold {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.keys(value).length !== 1) {
    throw invalidArgument(field, `must be one of ${THRESHOLD_SHAPE}, got ${describe(value)}`);
  }
  const [[name, amount]] = Object.entries(value) as [[string, unknown]];
  if (name === 'percent') {
    if (typeof amount !== 'number' || !Number.isInteger(amount) || amount < 1 || amount > MAX_THRESHOLD_PERCENT) {
      throw invalidArgument(`${field}.percent`, `must be a whole number from 1 to ${MAX_THRESHOLD_PERCENT}, got ${describe(amount)}`);
    }
    return { percent: amount };
  }
  if (name === 'tokens' || name === 'minorUnits') {
    const checked = requireAmount(`${field}.${name}`, amount);
    if (checked < 1) throw invalidArgument(`${field}.${name}`, 'must be at least 1: every spend is at or above 0');
    return name === 'tokens' ? { tokens: checked } : { minorUnits: checked };
  }
  throw invalidArgument(`${field}.${name}`, `is not a threshold member; use percent, tokens or minorUnits`);
}

function rank(threshold: AlertThreshold): number {
  return 'percent' in threshold ? 0 : 'tokens' in threshold ? 1 : 2;
}

function amountOf(threshold: AlertThreshold): number {
  return 'percent' in threshold ? threshold.percent : 'tokens' in threshold ? threshold.tokens : threshold.minorUnits;
}

/** How a threshold is named in an event's key and in messages: `80%`, `5000 tokens`, `5000 minorUnits`. */
export function thresholdLabel(threshold: AlertThreshold): string {
  if ('percent' in threshold) return `${threshold.percent}%`;
  return 'tokens' in threshold ? `${threshold.tokens} tokens` : `${threshold.minorUnits} minorUnits`;
}

/**
 * The settled amount of `unit` at which `threshold` fires, under `ceiling` (`undefined`: none), or
 * `null` when the threshold does not apply: a percentage without a ceiling or of a ceiling of 0
 * (which allows nothing), or an amount of the other unit. A percentage rounds up, so 80 % of 999 is
 * 800: the alert never fires below the share it names.
 */
export function thresholdAmount(threshold: AlertThreshold, unit: BooksUnit, ceiling: number | undefined): number | null {
  if ('percent' in threshold) {
    if (ceiling === undefined || ceiling === 0) return null;
    return Number((BigInt(ceiling) * BigInt(threshold.percent) + 99n) / 100n);
  }
  if (unit in threshold) return (threshold as Record<BooksUnit, number>)[unit];
  return null;
}

/** What a spend alert is about: the tenant, the agent (`null`: the tenant's own ceiling), the unit, the period key. */
export interface AlertSubject {
  readonly tenant: string;
  readonly agent: string | null;
  readonly unit: BooksUnit;
  readonly period: string;
}

/**
 * The events settled spend moving from `before` to `after` in one unit fires (docs/design/rules.md#e3):
 * a `threshold.crossed` for each threshold whose amount lies in `(before, after]`, lowest amount
 * first, and `ceiling.reached` when the ceiling (above 0) does. With `before` at 0 and `after` the settled spend
 * now, this is also what a threshold configured after usage crossed it fires at configuration
 * (docs/design/rules.md#e5): the store keeps one event per key, so one already fired is not fired
 * again. Answers `[]` when nothing is crossed; allocates nothing then beyond the list.
 */
export function crossingEvents(
  subject: AlertSubject,
  thresholds: readonly AlertThreshold[],
  ceiling: number | undefined,
  before: number,
  after: number,
  atMs: number,
): NewEvent[] {
  const events: NewEvent[] = [];
  if (after <= before) return events;
  const { tenant, agent, unit, period } = subject;
  const crossed: { threshold: AlertThreshold; amount: number }[] = [];
  for (const threshold of thresholds) {
    const amount = thresholdAmount(threshold, unit, ceiling);
    if (amount !== null && amount > before && amount <= after) crossed.push({ threshold, amount });
  }
  // In the order spend passed them: lowest amount first (a list sorts percentages before amounts).
  crossed.sort((a, b) => a.amount - b.amount);
  for (const { threshold, amount } of crossed) {
    const label = thresholdLabel(threshold);
    events.push({
      key: eventKey('threshold.crossed', tenant, agent, unit, period, label),
      type: 'threshold.crossed',
      tenant,
      atMs,
      data: { agent, unit, period, threshold: { ...threshold }, thresholdAmount: amount, ceiling: ceiling ?? null, settled: after },
    });
  }
  if (ceiling !== undefined && ceiling > 0 && ceiling > before && ceiling <= after) {
    events.push({
      key: eventKey('ceiling.reached', tenant, agent, unit, period),
      type: 'ceiling.reached',
      tenant,
      atMs,
      data: { agent, unit, period, ceiling, settled: after },
    });
  }
  return events;
}

/** One threshold of one ceiling as it stands: its amount in the ceiling's unit, and whether settled spend is at or past it. */
export interface ThresholdState {
  readonly threshold: AlertThreshold;
  readonly label: string;
  readonly amount: number;
  readonly crossed: boolean;
}

/**
 * The thresholds of one ceiling (`ceiling`: `null` when the unit has none) against `settled`, the
 * period's settled spend: each that applies, in order, with its amount and whether it is crossed
 * (settled at or past it; docs/design/rules.md#e7). The dashboard colours a ceiling's bar by the
 * highest crossed threshold; `alerts` lists them.
 */
export function thresholdStates(thresholds: readonly AlertThreshold[], unit: BooksUnit, ceiling: number | null, settled: number): ThresholdState[] {
  const states: ThresholdState[] = [];
  for (const threshold of thresholds) {
    const amount = thresholdAmount(threshold, unit, ceiling ?? undefined);
    if (amount === null) continue;
    states.push({ threshold, label: thresholdLabel(threshold), amount, crossed: settled >= amount });
  }
  return states;
}
