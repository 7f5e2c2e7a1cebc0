/** Units and times as the dashboard shows them: tokens, money as currency, UTC instants, named periods. */

const integer = new Intl.NumberFormat('en-US');

/** `12,345 tokens`. */
export function tokens(n) {
  return `${integer.format(n)} ${n === 1 ? 'token' : 'tokens'}`;
}
const compactFormat = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
/** `1.2M`: for chart axes. */
tokens.short = (n) => compactFormat.format(n);

/** A plain grouped integer: `12,345`. */
export function count(n) {
  return integer.format(n);
}

/**
 * How money is shown: the one precision rule of the dashboard (docs/guides/operating.md, "Money on
 * the dashboard"). An amount is stored as an integer of minor units; it is shown in currency units
 * with {@link MONEY_DECIMALS} decimals (fewer when the minor unit is coarser), rounded half away from
 * zero, except a non-zero amount below one cent, which is shown with
 * {@link SUB_CENT_SIGNIFICANT_DIGITS} significant digits so it never reads as $0.00. The conversion
 * is exact: the integer is turned into a decimal string without floating point.
 */
export const MONEY_DECIMALS = 2;
/** Significant digits of a non-zero amount below one cent (`$0.000123`). */
export const SUB_CENT_SIGNIFICANT_DIGITS = 3;

// The decimal digits of one minor unit: 6 for micro-units (1 000 000 to the unit).
function minorDigits(minorUnitsPerUnit) {
  return Math.round(Math.log10(minorUnitsPerUnit));
}

/** `minor` (an integer of minor units) as an exact decimal string of currency units: `1234567` → `"1.234567"`. */
export function minorToDecimal(minor, minorUnitsPerUnit) {
  const digits = minorDigits(minorUnitsPerUnit);
  const text = BigInt(minor).toString().padStart(digits + 1, '0');
  return digits === 0 ? text : `${text.slice(0, -digits)}.${text.slice(-digits)}`;
}

/**
 * Reads an amount typed in currency units (`5`, `5.00`, `$1,250.5`, `0.000125`) as an exact integer
 * of minor units, with no floating point: the decimal string is split and scaled as text. Throws
 * `{ field, message }` naming `field` when the text is not an amount, has more decimals than the
 * minor unit, or passes the largest amount (2^53 − 1 minor units). Empty text answers `undefined`.
 */
export function parseMoney(text, config, field) {
  const trimmed = String(text).trim().replace(/^\$|^[A-Z]{3}\s*/, '').trim();
  if (trimmed === '') return undefined;
  const digits = minorDigits(config.minorUnitsPerUnit);
  const match = /^(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d*))?$/.exec(trimmed);
  const example = digits === 0 ? '5' : `5.${'0'.repeat(Math.min(digits, MONEY_DECIMALS))}`;
  if (match === null) throw { field, message: `must be an amount in ${config.currency} such as ${example}, got "${String(text).trim()}"` };
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > digits) {
    throw { field, message: `has more decimals than the minor unit allows (at most ${digits}: 1 minor unit is ${minorToDecimal(1, config.minorUnitsPerUnit)} ${config.currency}), got "${String(text).trim()}"` };
  }
  const minor = BigInt(match[1].replaceAll(',', '')) * BigInt(config.minorUnitsPerUnit) + BigInt(fraction.padEnd(digits, '0') || '0');
  if (minor > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw { field, message: `is larger than the largest amount, ${minorToDecimal(Number.MAX_SAFE_INTEGER, config.minorUnitsPerUnit)} ${config.currency}` };
  }
  return Number(minor);
}

/**
 * A money formatter for the deployment's minor unit, by the rule of {@link MONEY_DECIMALS}:
 * `show(minor)` → `$1.50`, `$0.000123`; `show.exact(minor)` says the stored integer;
 * `show.input(minor)` is the amount as an operator types it back (`1.5`); `show.short` is for axes.
 */
export function moneyFormat(config) {
  const digits = minorDigits(config.minorUnitsPerUnit);
  const fixed = Math.min(MONEY_DECIMALS, digits);
  const numberFormat = (options) => {
    try {
      return new Intl.NumberFormat('en-US', { style: 'currency', currency: config.currency, ...options });
    } catch {
      return new Intl.NumberFormat('en-US', options);
    }
  };
  const fixedFormat = numberFormat({ minimumFractionDigits: fixed, maximumFractionDigits: fixed, roundingMode: 'halfExpand' });
  const smallFormat = numberFormat({ maximumSignificantDigits: SUB_CENT_SIGNIFICANT_DIGITS });
  // One cent (10^-fixed units) in minor units: below it, a non-zero amount takes significant digits.
  const cent = config.minorUnitsPerUnit / 10 ** fixed;
  const show = (minor) => {
    const decimal = minorToDecimal(minor, config.minorUnitsPerUnit);
    // Intl formats a decimal string exactly (no float): the rounding is the formatter's own.
    return minor !== 0 && minor < cent ? smallFormat.format(decimal) : fixedFormat.format(decimal);
  };
  show.exact = (minor) => `${integer.format(minor)} minor units (${config.minorUnitsPerUnit === 1 ? '' : `1/${integer.format(config.minorUnitsPerUnit)} `}${config.currency})`;
  show.input = (minor) => minorToDecimal(minor, config.minorUnitsPerUnit).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
  let compactMoney;
  try {
    compactMoney = new Intl.NumberFormat('en-US', { style: 'currency', currency: config.currency, notation: 'compact', maximumFractionDigits: 2 });
  } catch {
    compactMoney = compactFormat;
  }
  show.short = (minor) => compactMoney.format(minor / config.minorUnitsPerUnit);
  show.currency = config.currency;
  show.unitName = `${config.currency}, stored as 1/${integer.format(config.minorUnitsPerUnit)}`;
  return show;
}

/** `2026-11-30 17:32:05 UTC`. */
export function utc(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms)) return '—';
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** `17:32:05 UTC`. */
export function utcClock(ms) {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}

/** A billing period named in full: `2026-11 (monthly, UTC)`. */
export function periodName(period, kind) {
  const inferred = kind ?? (period.length === 7 ? 'monthly' : 'daily');
  return `${period} (${inferred}, UTC)`;
}

/** `3 min`, `2 h 5 min`, `4 d`: a duration in ms for people. */
export function duration(ms) {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d`;
}

/** `at most 5 per 60 s`. */
export function rateCeiling(ceiling) {
  return `at most ${count(ceiling.count)} per ${count(ceiling.windowSeconds)} s`;
}
