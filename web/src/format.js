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
 * A money formatter for the deployment's minor unit: amounts are divided by `minorUnitsPerUnit`
 * (a power of ten) and shown as `currency`, with as many decimals as the minor unit has but no
 * trailing zeros past two (`$1.50`, `$0.000123`). `exact(n)` says the stored integer.
 */
export function moneyFormat(config) {
  const decimals = Math.round(Math.log10(config.minorUnitsPerUnit));
  let format;
  try {
    format = new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: config.currency,
      minimumFractionDigits: Math.min(2, decimals),
      maximumFractionDigits: decimals,
    });
  } catch {
    format = new Intl.NumberFormat('en-US', { minimumFractionDigits: Math.min(2, decimals), maximumFractionDigits: decimals });
  }
  const show = (minor) => format.format(minor / config.minorUnitsPerUnit);
  show.exact = (minor) => `${integer.format(minor)} minor units (${config.minorUnitsPerUnit === 1 ? '' : `1/${integer.format(config.minorUnitsPerUnit)} `}${config.currency})`;
  let compactMoney;
  try {
    compactMoney = new Intl.NumberFormat('en-US', { style: 'currency', currency: config.currency, notation: 'compact', maximumFractionDigits: 2 });
  } catch {
    compactMoney = compactFormat;
  }
  show.short = (minor) => compactMoney.format(minor / config.minorUnitsPerUnit);
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
