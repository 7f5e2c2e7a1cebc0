import { DEFAULT_MONEY_DISPLAY, requireMoneyDisplay } from '../../http/dashboard.js';
import { DEFAULT_SWEEP_INTERVAL_MS, MAX_SWEEP_INTERVAL_MS } from '../../plane/sweeper.js';
import { UsageError } from '../usage-error.js';

/** The store `serve` and `keys` use when neither `--store` nor `QUOTAPLANE_STORE` names one: a SQLite file in the working directory. */
export const DEFAULT_STORE_URL = 'sqlite:./quotaplane.db';
/** The address `serve` listens on by default: this machine only. */
export const DEFAULT_HOST = '127.0.0.1';
/** The port `serve` listens on by default. */
export const DEFAULT_PORT = 7070;

/**
 * How long `serve` lets open connections drain after SIGTERM before it force-closes them, in ms.
 * A client that sent half a request and went quiet would otherwise keep the process alive.
 */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;
/** Longest `--shutdown-timeout-ms` accepted: what a Node timer can wait (2^31 - 1 ms). */
export const MAX_SHUTDOWN_TIMEOUT_MS = 2_147_483_647;

/** Environment variable naming the store (`--store` wins). */
export const STORE_ENV = 'QUOTAPLANE_STORE';
/** Environment variable naming the port (`--port` wins). */
export const PORT_ENV = 'QUOTAPLANE_PORT';
/** Environment variable naming the sweep interval in ms (`--sweep-interval-ms` wins; 0 disables the sweeper). */
export const SWEEP_INTERVAL_ENV = 'QUOTAPLANE_SWEEP_INTERVAL_MS';
/** Environment variable naming the currency the dashboard shows money in (`--currency` wins; default USD). */
export const CURRENCY_ENV = 'QUOTAPLANE_CURRENCY';
/** Environment variable naming how many minor units make one currency unit (`--minor-units-per-unit` wins; default 1000000). */
export const MINOR_UNITS_PER_UNIT_ENV = 'QUOTAPLANE_MINOR_UNITS_PER_UNIT';

/**
 * Where and how `serve` runs: the store URL, the host and port it listens on (0 = any free port),
 * the pause between sweeps of lapsed leases in ms (0 = no sweeper in this process; issue #5), and
 * `shutdownTimeoutMs`, how long a stop waits for open connections before force-closing them
 * (optional, default {@link DEFAULT_SHUTDOWN_TIMEOUT_MS}).
 */
export interface ServeConfig {
  readonly storeUrl: string;
  readonly host: string;
  readonly port: number;
  readonly sweepIntervalMs: number;
  readonly shutdownTimeoutMs?: number | undefined;
  /** The dashboard's currency, ISO 4217 (issue #11); default USD. */
  readonly currency?: string | undefined;
  /** Minor units per currency unit the dashboard divides by, a power of ten; default 1 000 000 (micro-USD). */
  readonly minorUnitsPerUnit?: number | undefined;
}

/** Environment variables as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Resolves `serve`'s configuration (issue #4 item 1, issue #5 item 2): each setting from its flag,
 * else its environment variable, else its default ({@link DEFAULT_STORE_URL}, {@link DEFAULT_HOST},
 * {@link DEFAULT_PORT}, `DEFAULT_SWEEP_INTERVAL_MS` = 5000). Pure: the caller passes the
 * environment. Throws `UsageError` naming `QUOTAPLANE_PORT` or `QUOTAPLANE_SWEEP_INTERVAL_MS`
 * when it is malformed.
 */
export function resolveServeConfig(
  flags: { store?: string; host?: string; port?: number; sweepIntervalMs?: number; shutdownTimeoutMs?: number; currency?: string; minorUnitsPerUnit?: number },
  env: Environment,
): ServeConfig {
  const money = moneyFrom(flags, env);
  return Object.freeze({
    currency: money.currency,
    minorUnitsPerUnit: money.minorUnitsPerUnit,
    storeUrl: resolveStoreUrl(flags.store, env),
    host: flags.host ?? DEFAULT_HOST,
    port: flags.port ?? portFromEnv(env[PORT_ENV]) ?? DEFAULT_PORT,
    sweepIntervalMs: flags.sweepIntervalMs ?? sweepIntervalFromEnv(env[SWEEP_INTERVAL_ENV]) ?? DEFAULT_SWEEP_INTERVAL_MS,
    shutdownTimeoutMs: flags.shutdownTimeoutMs ?? DEFAULT_SHUTDOWN_TIMEOUT_MS,
  });
}

/** The store URL: `--store`, else `QUOTAPLANE_STORE` (when not empty), else {@link DEFAULT_STORE_URL}. */
export function resolveStoreUrl(flag: string | undefined, env: Environment): string {
  const fromEnv = env[STORE_ENV];
  return flag ?? (fromEnv !== undefined && fromEnv !== '' ? fromEnv : DEFAULT_STORE_URL);
}

function portFromEnv(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const port = parsePort(value);
  if (port === null) throw new UsageError(`${PORT_ENV} must be a port number from 0 to 65535, got ${JSON.stringify(value)}`);
  return port;
}

function sweepIntervalFromEnv(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const intervalMs = parseIntervalMs(value);
  if (intervalMs === null) {
    throw new UsageError(`${SWEEP_INTERVAL_ENV} must be a whole number of milliseconds from 0 (no sweeper) to ${MAX_SWEEP_INTERVAL_MS}, got ${JSON.stringify(value)}`);
  }
  return intervalMs;
}

/** A sweep interval: a whole number of milliseconds from 0 (no sweeper) to `MAX_SWEEP_INTERVAL_MS`, or `null`. */
export function parseIntervalMs(text: string): number | null {
  if (!/^\d{1,10}$/.test(text.trim())) return null;
  const intervalMs = Number(text.trim());
  return intervalMs <= MAX_SWEEP_INTERVAL_MS ? intervalMs : null;
}

/** A TCP port, 0 … 65535 (0 lets the system pick a free one), or `null`. */
export function parsePort(text: string): number | null {
  if (!/^\d{1,5}$/.test(text.trim())) return null;
  const port = Number(text.trim());
  return port <= 65_535 ? port : null;
}

/** A shutdown timeout: a whole number of milliseconds from 0 to `MAX_SHUTDOWN_TIMEOUT_MS`, or `null`. */
export function parseShutdownTimeoutMs(text: string): number | null {
  if (!/^\d{1,10}$/.test(text.trim())) return null;
  const timeoutMs = Number(text.trim());
  return timeoutMs <= MAX_SHUTDOWN_TIMEOUT_MS ? timeoutMs : null;
}

/** A minor-unit scale as text: a power of ten from 1 to 10^12, or `null`. */
export function parseMinorUnitsPerUnit(text: string): number | null {
  if (!/^10*$/.test(text.trim()) || text.trim().length > 13) return null;
  return Number(text.trim());
}

// The dashboard's money display: each member from its flag, else its environment variable, else micro-USD.
function moneyFrom(flags: { currency?: string; minorUnitsPerUnit?: number }, env: Environment): { currency: string; minorUnitsPerUnit: number } {
  const currencyText = flags.currency ?? (env[CURRENCY_ENV] || undefined);
  const scaleText = env[MINOR_UNITS_PER_UNIT_ENV] || undefined;
  let minorUnitsPerUnit = flags.minorUnitsPerUnit ?? DEFAULT_MONEY_DISPLAY.minorUnitsPerUnit;
  if (flags.minorUnitsPerUnit === undefined && scaleText !== undefined) {
    const parsed = parseMinorUnitsPerUnit(scaleText);
    if (parsed === null) throw new UsageError(`${MINOR_UNITS_PER_UNIT_ENV} must be a power of ten from 1 to 1000000000000, got ${JSON.stringify(scaleText)}`);
    minorUnitsPerUnit = parsed;
  }
  const money = { currency: currencyText ?? DEFAULT_MONEY_DISPLAY.currency, minorUnitsPerUnit };
  try {
    return requireMoneyDisplay(money);
  } catch (error) {
    throw new UsageError(`${flags.currency !== undefined ? '--currency' : CURRENCY_ENV}: ${(error as Error).message}`);
  }
}
