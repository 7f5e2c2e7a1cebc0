import type { SpentOutStatus } from '../../http/errors.js';
import { UsageError } from '../usage-error.js';
import { NO_VALUE, refusedSettingMessage, SERVE_SETTINGS, type LogLevel, type ServeSetting } from './serve-settings.js';

/** The store `serve` and `keys` use when neither `--store` nor `QUOTAPLANE_STORE` names one: a SQLite file in the working directory. */
export const DEFAULT_STORE_URL = 'sqlite:./quotaplane.db';

/** Environment variable naming the store (`--store` wins). */
export const STORE_ENV = 'QUOTAPLANE_STORE';

/**
 * Where and how `serve` runs (every setting is in `SERVE_SETTINGS`): the store
 * URL, the host and port it listens on (0 = any free port), the time from the start of one sweep
 * of lapsed leases to the next in ms (0 = no sweeper in this process), and, optional with their defaults, how long a
 * start waits for the store (`startupTimeoutMs`, 30 000), how long a stop drains
 * (`shutdownTimeoutMs`, 10 000), the log level, the body limit in bytes, how many tenants get
 * their own metric series, and the file the first key is written to (none: the terminal).
 */
export interface ServeConfig {
  readonly storeUrl: string;
  readonly host: string;
  readonly port: number;
  readonly sweepIntervalMs: number;
  /** How often the webhook dispatcher polls, ms (0: no dispatcher in this process); default 250. */
  readonly webhookPollMs?: number | undefined;
  readonly shutdownTimeoutMs?: number | undefined;
  readonly startupTimeoutMs?: number | undefined;
  readonly logLevel?: LogLevel | undefined;
  readonly bodyLimitBytes?: number | undefined;
  readonly metricsTenants?: number | undefined;
  readonly firstKeyFile?: string | undefined;
  /** The dashboard's currency, ISO 4217; default USD. */
  readonly currency?: string | undefined;
  /** Minor units per currency unit the dashboard divides by, a power of ten; default 1 000 000 (micro-USD). */
  readonly minorUnitsPerUnit?: number | undefined;
  /** Retention (docs/design/rules.md#r1): prune what closed longer ago than this many ms; absent: never prune. */
  readonly pruneOlderThanMs?: number | undefined;
  /** The pause between prunes, ms; default 3 600 000. */
  readonly pruneIntervalMs?: number | undefined;
  /** The status of a `SpentOut` only the period's end clears (docs/design/rules.md#d13); default 429. */
  readonly spentOutStatus?: SpentOutStatus | undefined;
}

/** Environment variables as `process.env` holds them. */
export type Environment = Readonly<Record<string, string | undefined>>;

/**
 * Flags of `serve` as commander parsed them, under commander's names (`store`, `logLevel`,
 * `sweepIntervalMs`), each already checked by its setting's parser.
 */
export type ServeFlags = Readonly<Record<string, unknown>>;

/** Commander's name of a flag's value: `--log-level` → `logLevel`. */
export function flagAttribute(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * Resolves `serve`'s configuration: each setting from its flag, else its
 * environment variable (when set and not empty), else its default. Pure: the caller passes the
 * environment. Throws `UsageError` naming the variable and what it takes when one is malformed.
 */
export function resolveServeConfig(flags: ServeFlags, env: Environment): ServeConfig {
  const config: Record<string, unknown> = {};
  const given = new Set<string>();
  for (const setting of SERVE_SETTINGS as readonly ServeSetting[]) {
    const flag = flags[flagAttribute(setting.flag)];
    const fromEnvironment = env[setting.env];
    if (flag !== undefined || (fromEnvironment !== undefined && fromEnvironment !== '')) given.add(setting.key);
    const value = flag !== undefined ? flag : fromEnv(setting, fromEnvironment);
    if (value !== undefined && value !== NO_VALUE) config[setting.key] = value;
  }
  refuseIntervalWithoutAge(config, given);
  return Object.freeze(config) as unknown as ServeConfig;
}

// A prune interval without a prune age would be silently ignored: refuse it as a malformed setting is.
function refuseIntervalWithoutAge(config: Record<string, unknown>, given: ReadonlySet<string>): void {
  if (!given.has('pruneIntervalMs') || config.pruneOlderThanMs !== undefined) return;
  throw new UsageError(
    '--prune-interval-ms (QUOTAPLANE_PRUNE_INTERVAL_MS) is the pause between prunes, but --prune-older-than ' +
      '(QUOTAPLANE_PRUNE_OLDER_THAN) is not set (or is none), so nothing would be pruned; give --prune-older-than an ' +
      'age such as 90d, or drop --prune-interval-ms',
  );
}

/** The store URL: `--store`, else `QUOTAPLANE_STORE` (when not empty), else {@link DEFAULT_STORE_URL}. */
export function resolveStoreUrl(flag: string | undefined, env: Environment): string {
  const fromEnvironment = env[STORE_ENV];
  return flag ?? (fromEnvironment !== undefined && fromEnvironment !== '' ? fromEnvironment : DEFAULT_STORE_URL);
}

function fromEnv(setting: ServeSetting, value: string | undefined): unknown {
  if (value === undefined || value === '') return setting.fallback;
  const parsed = setting.parse(value);
  if (parsed === null) throw new UsageError(refusedSettingMessage(setting, setting.env, value));
  return parsed;
}
