import { InvalidArgumentError } from 'commander';
import ms from 'ms';
import { requireTenant } from '../core/identifiers.js';
import { isQuotaError } from '../core/errors.js';

/**
 * Argument parsers for commander options. Each throws commander's `InvalidArgumentError`, which
 * commander prints as one line naming the flag and the value (`option '--tenants <count>'
 * argument 'x' is invalid. …`); the text after it says what a valid value looks like.
 */

/** A whole number of at least `min` (and a safe integer). */
export function wholeNumber(min: number): (value: string) => number {
  return (value) => {
    const parsed = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min) {
      throw new InvalidArgumentError(`Use a whole number from ${min} to ${Number.MAX_SAFE_INTEGER}.`);
    }
    return parsed;
  };
}

/** A whole number from `min` to `max`; any other value is refused naming that range. */
export function wholeNumberBetween(min: number, max: number): (value: string) => number {
  return (value) => {
    const parsed = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
    if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) throw new InvalidArgumentError(`Use a whole number from ${min} to ${max}.`);
    return parsed;
  };
}

/** An amount: a non-negative safe integer (docs/design/decisions.md "Amounts are safe integers, and nothing saturates"; 0 means nothing is allowed). */
export const amount = wholeNumber(0);

/**
 * An amount, or the word `unlimited` (a merge patch then removes the ceiling). Answered as is:
 * commander turns a parser's `null` into an empty string, so the word is mapped by the caller.
 */
export function amountOrUnlimited(value: string): number | 'unlimited' {
  if (value.trim() === 'unlimited') return 'unlimited';
  try {
    return amount(value);
  } catch {
    throw new InvalidArgumentError(`Use a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, or 'unlimited' to remove the ceiling.`);
  }
}

/** A finite number greater than 0 (decimals allowed). */
export function positiveNumber(value: string): number {
  const parsed = /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError('Use a number greater than 0, such as 1 or 1.2.');
  return parsed;
}

/** A 32-bit unsigned seed, `0 … 4294967295`. */
export function seed(value: string): number {
  const parsed = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed > 0xffff_ffff) {
    throw new InvalidArgumentError('Use a whole number from 0 to 4294967295.');
  }
  return parsed;
}

/**
 * One tenant's name for an act or listing (`--tenant`): an identifier other than `*`, which only
 * API keys use, to mean every tenant (docs/design/decisions.md "Identifiers"; `keys create` parses its own).
 */
export function tenantName(value: string): string {
  try {
    return requireTenant('--tenant', value);
  } catch (error) {
    if (isQuotaError(error, 'INVALID_ARGUMENT')) throw new InvalidArgumentError(error.message.replace(/^--tenant: /, ''));
    throw error;
  }
}

/**
 * An age with a unit, parsed by `ms` (`90d`, `12h`, `30m`, `2w`, `1.5 days`), as whole
 * milliseconds of at least 1. A bare number is refused: `--older-than 90` would otherwise mean
 * 90 ms, and a retention age is never meant so.
 */
export function ageWithUnit(value: string): number {
  const parsed = parseAge(value);
  if (parsed === null) throw new InvalidArgumentError(`${ageProblem(value)}; use ${AGE_EXPECTED}.`);
  return parsed;
}

/**
 * What is wrong with an age {@link parseAge} refused, in words: not positive (`0d`, `-1d`), too
 * large, a bare number without a unit, or not an age at all. One clause, without what to use.
 */
export function ageProblem(value: string): string {
  const text = value.trim();
  const signed = /^([+-]?)(\d+(\.\d+)?)\s*([a-z]+)$/i.exec(text);
  if (/^[+-]?\d+(\.\d+)?$/.test(text)) return `${JSON.stringify(value)} is a bare number: a bare number has no unit and is refused`;
  if (signed !== null) {
    const magnitude = ms(`${signed[2]}${signed[4]}` as ms.StringValue);
    if (magnitude !== undefined && Number.isFinite(magnitude)) {
      if (signed[1] === '-' && magnitude > 0) return `${JSON.stringify(value)} is negative; an age must be positive (at least 1 ms)`;
      if (Math.round(magnitude) < 1) return `${JSON.stringify(value)} is no age at all; an age must be positive (at least 1 ms)`;
      if (!Number.isSafeInteger(Math.round(magnitude))) return `${JSON.stringify(value)} is too large`;
    }
  }
  return `${JSON.stringify(value)} is not an age`;
}

/** What {@link parseAge} takes, for messages. */
export const AGE_EXPECTED = 'a positive age with a unit, such as 90d, 12h, 30m or 2w';

/** {@link ageWithUnit} without throwing: the age in whole ms, or `null` when `value` is not one. */
export function parseAge(value: string): number | null {
  const text = value.trim();
  const parsed = /^\d+(\.\d+)?\s*[a-z]+$/i.test(text) ? ms(text as ms.StringValue) : undefined;
  if (parsed === undefined || !Number.isFinite(parsed)) return null;
  const rounded = Math.round(parsed);
  return rounded >= 1 && Number.isSafeInteger(rounded) ? rounded : null;
}
