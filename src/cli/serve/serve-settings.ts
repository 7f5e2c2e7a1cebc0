import { DEFAULT_MONEY_DISPLAY } from '../../http/dashboard.js';
import { SPENT_OUT_STATUSES } from '../../http/errors.js';
import { DEFAULT_BODY_LIMIT_BYTES, DEFAULT_METRICS_TENANTS } from '../../http/http-defaults.js';
import { DEFAULT_SWEEP_INTERVAL_MS, MAX_SWEEP_INTERVAL_MS } from '../../plane/sweeper.js';
import { DEFAULT_PRUNE_INTERVAL_MS } from '../../plane/pruner.js';
import { DEFAULT_WEBHOOK_POLL_MS } from '../../plane/webhook-defaults.js';
import { AGE_EXPECTED, ageProblem, parseAge } from '../options.js';

/** The levels `--log-level` takes, most severe first (`silent` logs nothing). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Largest whole number of milliseconds a Node timer can wait (2^31 − 1). */
export const MAX_TIMER_MS = 2_147_483_647;
/** How long `serve` waits for a store that is not reachable yet before it gives up, by default (ms). */
export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
/** How long `serve` lets requests in flight drain after SIGTERM by default (ms). */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

/**
 * One setting of `quotaplane serve`: its flag, the environment variable that
 * sets it when the flag is absent, its default and unit as the help and the docs show them, and
 * how its text is read (`null` for a value it refuses; `expected` says what it takes). docs/guides/operating.md
 * carries one table of these, checked against `serve --help` by a test.
 */
export interface ServeSetting<T = unknown> {
  /** The key in `ServeConfig`. */
  readonly key: string;
  /** `--port`. */
  readonly flag: string;
  /** `<port>`: the value's name in the help. */
  readonly value: string;
  /** `QUOTAPLANE_PORT`. */
  readonly env: string;
  /** The default as shown (`7070`, `none`). */
  readonly shownDefault: string;
  /** `ms`, `bytes`, `tenants`, or `''` for none. */
  readonly unit: string;
  /** What it sets, one sentence without its default. */
  readonly description: string;
  /** What a valid value looks like, for the error message. */
  readonly expected: string;
  /** The value, `null` for one it refuses, or {@link NO_VALUE} for the word that turns the setting off (`none`). */
  readonly parse: (text: string) => T | typeof NO_VALUE | null;
  /** Says what is wrong with a refused text, when that is more than "not what `expected` says". */
  readonly problem?: (text: string) => string;
  readonly fallback: T | undefined;
}

/**
 * What a setting's parser answers for the word `none` of a setting that is off by default
 * (`--prune-older-than none`): the setting is left unset, and a flag saying so still wins over
 * its environment variable.
 */
export const NO_VALUE: unique symbol = Symbol('none');

/**
 * The message for a refused setting text: `<name> must be <expected>, got "<text>"`, with what is
 * wrong first when the setting says (`"0d" is no age at all; …`).
 */
export function refusedSettingMessage(setting: ServeSetting, name: string, text: string): string {
  const problem = setting.problem?.(text);
  return problem === undefined
    ? `${name} must be ${setting.expected}, got ${JSON.stringify(text)}`
    : `${name}: ${problem}; it must be ${setting.expected}`;
}

// An age with a unit, or `none` (never prune).
function ageOrNone(text: string): number | typeof NO_VALUE | null {
  return text.trim().toLowerCase() === 'none' ? NO_VALUE : parseAge(text);
}

function wholeNumberUpTo(max: number, min = 0): (text: string) => number | null {
  return (text) => {
    if (!/^\d{1,16}$/.test(text.trim())) return null;
    const value = Number(text.trim());
    return Number.isSafeInteger(value) && value >= min && value <= max ? value : null;
  };
}

const text = (value: string): string | null => (value === '' ? null : value);

/** Every setting of `serve`, in the order the help and the docs list them. */
export const SERVE_SETTINGS = Object.freeze([
  {
    key: 'storeUrl',
    flag: '--store',
    value: '<url>',
    env: 'QUOTAPLANE_STORE',
    shownDefault: 'sqlite:./quotaplane.db',
    unit: '',
    description: 'the store: sqlite:<path>, <path>.db or postgres://…',
    expected: 'a store URL',
    parse: text,
    fallback: 'sqlite:./quotaplane.db',
  },
  {
    key: 'host',
    flag: '--host',
    value: '<host>',
    env: 'QUOTAPLANE_HOST',
    shownDefault: '127.0.0.1',
    unit: '',
    description: 'the address to listen on (127.0.0.1: this machine only; 0.0.0.0: every interface)',
    expected: 'an address or host name',
    parse: text,
    fallback: '127.0.0.1',
  },
  {
    key: 'port',
    flag: '--port',
    value: '<port>',
    env: 'QUOTAPLANE_PORT',
    shownDefault: '7070',
    unit: '',
    description: 'the port to listen on, 0 for any free one',
    expected: 'a port number from 0 to 65535',
    parse: wholeNumberUpTo(65_535),
    fallback: 7070,
  },
  {
    key: 'logLevel',
    flag: '--log-level',
    value: '<level>',
    env: 'QUOTAPLANE_LOG_LEVEL',
    shownDefault: 'info',
    unit: '',
    description: `the level of the JSON log lines on stdout: ${LOG_LEVELS.join(', ')}`,
    expected: `one of ${LOG_LEVELS.join(', ')}`,
    parse: (value: string) => ((LOG_LEVELS as readonly string[]).includes(value) ? value : null),
    fallback: 'info',
  },
  {
    key: 'sweepIntervalMs',
    flag: '--sweep-interval-ms',
    value: '<ms>',
    env: 'QUOTAPLANE_SWEEP_INTERVAL_MS',
    shownDefault: String(DEFAULT_SWEEP_INTERVAL_MS),
    unit: 'ms',
    description: 'the time from the start of one sweep of lapsed leases to the next, 0 for no sweeper in this process',
    expected: `a whole number of milliseconds from 0 (no sweeper) to ${MAX_SWEEP_INTERVAL_MS}`,
    parse: wholeNumberUpTo(MAX_SWEEP_INTERVAL_MS),
    fallback: DEFAULT_SWEEP_INTERVAL_MS,
  },
  {
    key: 'webhookPollMs',
    flag: '--webhook-poll-ms',
    value: '<ms>',
    env: 'QUOTAPLANE_WEBHOOK_POLL_MS',
    shownDefault: String(DEFAULT_WEBHOOK_POLL_MS),
    unit: 'ms',
    description: 'how often the webhook dispatcher looks for events to deliver (docs/guides/webhooks.md), 0 for no dispatcher in this process',
    expected: `a whole number of milliseconds from 0 (no dispatcher) to ${MAX_SWEEP_INTERVAL_MS}`,
    parse: wholeNumberUpTo(MAX_SWEEP_INTERVAL_MS),
    fallback: DEFAULT_WEBHOOK_POLL_MS,
  },
  {
    key: 'pruneOlderThanMs',
    flag: '--prune-older-than',
    value: '<age>',
    env: 'QUOTAPLANE_PRUNE_OLDER_THAN',
    shownDefault: 'none',
    unit: '',
    description: 'prune closed runs (with their passes and receipts) and spent rate instants older than this age, such as 90d; none: never prune',
    expected: `${AGE_EXPECTED}, or none`,
    parse: ageOrNone,
    problem: ageProblem,
    fallback: undefined,
  },
  {
    key: 'pruneIntervalMs',
    flag: '--prune-interval-ms',
    value: '<ms>',
    env: 'QUOTAPLANE_PRUNE_INTERVAL_MS',
    shownDefault: String(DEFAULT_PRUNE_INTERVAL_MS),
    unit: 'ms',
    description: 'with --prune-older-than (refused without it), the pause between prunes',
    expected: `a whole number of milliseconds from 1 to ${MAX_SWEEP_INTERVAL_MS}`,
    parse: wholeNumberUpTo(MAX_SWEEP_INTERVAL_MS, 1),
    fallback: DEFAULT_PRUNE_INTERVAL_MS,
  },
  {
    key: 'startupTimeoutMs',
    flag: '--startup-timeout-ms',
    value: '<ms>',
    env: 'QUOTAPLANE_STARTUP_TIMEOUT_MS',
    shownDefault: String(DEFAULT_STARTUP_TIMEOUT_MS),
    unit: 'ms',
    description: 'how long to keep retrying a store that is not reachable yet, with backoff, before giving up (exit 4)',
    expected: `a whole number of milliseconds from 0 to ${MAX_TIMER_MS}`,
    parse: wholeNumberUpTo(MAX_TIMER_MS),
    fallback: DEFAULT_STARTUP_TIMEOUT_MS,
  },
  {
    key: 'shutdownTimeoutMs',
    flag: '--shutdown-timeout-ms',
    value: '<ms>',
    env: 'QUOTAPLANE_SHUTDOWN_TIMEOUT_MS',
    shownDefault: String(DEFAULT_SHUTDOWN_TIMEOUT_MS),
    unit: 'ms',
    description: 'on SIGTERM, how long requests in flight may drain before their connections are cut',
    expected: `a whole number of milliseconds from 0 to ${MAX_TIMER_MS}`,
    parse: wholeNumberUpTo(MAX_TIMER_MS),
    fallback: DEFAULT_SHUTDOWN_TIMEOUT_MS,
  },
  {
    key: 'bodyLimitBytes',
    flag: '--body-limit-bytes',
    value: '<bytes>',
    env: 'QUOTAPLANE_BODY_LIMIT_BYTES',
    shownDefault: String(DEFAULT_BODY_LIMIT_BYTES),
    unit: 'bytes',
    description: 'the largest request body accepted; larger ones answer 413',
    expected: 'a whole number of bytes from 1 to 1073741824',
    parse: wholeNumberUpTo(1_073_741_824, 1),
    fallback: DEFAULT_BODY_LIMIT_BYTES,
  },
  {
    key: 'metricsTenants',
    flag: '--metrics-tenants',
    value: '<count>',
    env: 'QUOTAPLANE_METRICS_TENANTS',
    shownDefault: String(DEFAULT_METRICS_TENANTS),
    unit: 'tenants',
    description:
      'how many tenants get their own series on /metrics (the busiest by slots; for the spend gauges, those nearest a spend ceiling; for the per-tenant counters, the first counted), and are counted by name in the refusal history of GET /v1/plane/refusals; the rest are summed into tenant="other"',
    expected: 'a whole number from 0 to 10000',
    parse: wholeNumberUpTo(10_000),
    fallback: DEFAULT_METRICS_TENANTS,
  },
  {
    key: 'firstKeyFile',
    flag: '--first-key-file',
    value: '<path>',
    env: 'QUOTAPLANE_FIRST_KEY_FILE',
    // Not 'none': unlike --prune-older-than, no word turns this off, and 'none' would be taken as a file name.
    shownDefault: 'quotaplane-first-key beside the SQLite store file, else in the working directory',
    unit: '',
    description:
      "write the first operator key made on a store with no key to this new file (mode 0600; an existing file is refused, never overwritten), or print it on stderr with '-'",
    expected: "a file path, or '-' for stderr",
    parse: text,
    fallback: undefined,
  },
  {
    key: 'currency',
    flag: '--currency',
    value: '<code>',
    env: 'QUOTAPLANE_CURRENCY',
    shownDefault: DEFAULT_MONEY_DISPLAY.currency,
    unit: '',
    description: 'the currency the dashboard shows money in, an ISO 4217 code',
    expected: 'an ISO 4217 code of three capital letters, such as USD or EUR',
    parse: (value: string) => (/^[A-Z]{3}$/.test(value) ? value : null),
    fallback: DEFAULT_MONEY_DISPLAY.currency,
  },
  {
    key: 'minorUnitsPerUnit',
    flag: '--minor-units-per-unit',
    value: '<n>',
    env: 'QUOTAPLANE_MINOR_UNITS_PER_UNIT',
    shownDefault: String(DEFAULT_MONEY_DISPLAY.minorUnitsPerUnit),
    unit: 'minor units',
    description: 'how many of the deployment\'s minor units make one currency unit on the dashboard (1000000: micro-USD)',
    expected: 'a power of ten from 1 to 1000000000000, such as 100 for cents or 1000000 for micro-units',
    parse: (value: string) => (/^10{0,12}$/.test(value.trim()) ? Number(value.trim()) : null),
    fallback: DEFAULT_MONEY_DISPLAY.minorUnitsPerUnit,
  },
  {
    key: 'spentOutStatus',
    flag: '--spent-out-status',
    value: '<status>',
    env: 'QUOTAPLANE_SPENT_OUT_STATUS',
    shownDefault: '429',
    unit: '',
    description:
      "the HTTP status of a SpentOut only the period's end clears: 429 with Retry-After until then (as v1 was released), " +
      'or 403 without it, which generic retry logic neither sleeps on for weeks nor loops on; both carry retryAtMs',
    expected: '429 or 403',
    parse: (value: string) => SPENT_OUT_STATUSES.find((status) => String(status) === value.trim()) ?? null,
    fallback: 429,
  },
] as const satisfies readonly ServeSetting[]);

/**
 * `QUOTAPLANE_*` variables quotaplane reads somewhere besides `serve`'s settings: the operator
 * commands' server and key, and the test and bench servers. Any other is reported at start-up.
 */
export const OTHER_KNOWN_ENV: readonly string[] = Object.freeze([
  'QUOTAPLANE_URL',
  'QUOTAPLANE_KEY',
  'QUOTAPLANE_TEST_PG_URL',
  'QUOTAPLANE_TEST_BACKENDS',
  'QUOTAPLANE_BENCH_PG_URL',
  'QUOTAPLANE_CHROMIUM',
]);

/**
 * The `QUOTAPLANE_*` names in `env` that no setting reads, each with the closest known name when
 * one is near (a typo such as `QUOTAPLANE_PROT`), in name order.
 */
export function unknownQuotaplaneVariables(env: Readonly<Record<string, string | undefined>>): { name: string; closest: string | null }[] {
  const known = [...SERVE_SETTINGS.map((setting) => setting.env), ...OTHER_KNOWN_ENV];
  return Object.keys(env)
    .filter((name) => name.startsWith('QUOTAPLANE_') && !known.includes(name))
    .sort()
    .map((name) => {
      let closest: string | null = null;
      let best = 4;
      for (const candidate of known) {
        const distance = editDistance(name, candidate);
        if (distance < best) {
          best = distance;
          closest = candidate;
        }
      }
      return { name, closest };
    });
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    let diagonal = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const above = row[j] ?? 0;
      row[j] = Math.min(above + 1, (row[j - 1] ?? 0) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] ?? 0;
}
