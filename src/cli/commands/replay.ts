import { type Command, Option } from 'commander';

import { isQuotaError } from '../../core/errors.js';
import type { Period } from '../../core/period.js';
import { EXIT, EXIT_STATUS_HELP } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { outputFor, type SetExitStatus } from '../command-output.js';
import { amount, positiveNumber, seed, wholeNumberBetween } from '../options.js';
import { BUNDLED_TRACE_PATH } from '../replay/bundled-trace.js';
import { renderReplayTable } from '../replay/replay-report.js';
import type { OpenedReplayTarget } from '../replay/replay-store.js';
import type { ReplayOptions } from '../replay/replay-types.js';
import { UsageError } from '../usage-error.js';
import { MAX_LEASE_MS } from '../../store/store-arguments.js';

/**
 * The longest `--wait`, virtual ms: one less than the longest lease (`MAX_LEASE_MS`), since a
 * waiter's place is leased for the wait and 1 ms more (replay-wait.ts `termsOf`).
 */
export const MAX_REPLAY_WAIT_MS = MAX_LEASE_MS - 1;

/** The flags of `replay` as commander parses them. */
interface ReplayFlags {
  tenants: number;
  seed: number;
  zipfExponent: number;
  maxConcurrent?: number;
  tokensPerPeriod?: number;
  minorUnitsPerPeriod?: number;
  period: Period;
  priceIn: number;
  priceOut: number;
  maxOutputTokens: number;
  store?: string;
  keepStore: boolean;
  url?: string;
  key?: string;
  wait?: number;
  planeMaxConcurrent?: number;
  json: boolean;
}

const DESCRIPTION = [
  'Drive every row of an LLM request trace through the plane and prove the books stay exact. Without a file, ' +
    'it replays the bundled conversation trace of the Azure LLM inference trace 2023 (19,366 requests, CC BY 4.0).',
  'The trace is a CSV with the header TIMESTAMP,ContextTokens,GeneratedTokens (the Azure LLM inference trace ' +
    '2023 format). Time is virtual, taken from the trace. Each row is one run of one model call for a tenant ' +
    'drawn by a seeded Zipf choice; it is admitted at its arrival with the budget ContextTokens + ' +
    '--max-output-tokens (per run and per call, width 1), runs for 250 ms + 20 ms x GeneratedTokens, then ' +
    'settles its real tokens and price and concludes.',
  'The report gives per tenant the admitted runs, refusals by code, settled spend and peak running runs, and ' +
    'six invariants measured from the store: settledWithinCeiling, runningWithinCeiling, slotsHeldWhileRunning, ' +
    'settledExactlyOnce, holdsReleased, slotsReleased. Exit status 1 when any is false.',
  'With --wait MS every admission refused only TooManyRuns waits in its tenant queue (first come, first served) ' +
    'up to MS virtual ms; a granted request starts then and keeps its duration. The report adds, per tenant, how ' +
    'many waited, were granted or timed out, and the wait percentiles (p50, p90, p99, max).',
  'Through a server (--url), start it with --sweep-interval-ms 0: its sweeper judges leases by the wall clock, ' +
    "so a past trace's runs look lapsed and lose their slots early (slotsHeldWhileRunning turns false).",
].join('\n\n');

/**
 * Most tenants a replay spreads its rows over: the Zipf table and the per-tenant report are sized
 * by it, so an unbounded count (1e8) would exhaust memory before the first row is read.
 */
export const MAX_REPLAY_TENANTS = 100_000;

/** Registers `quotaplane replay [trace.csv]` on `program`; without a file it replays {@link BUNDLED_TRACE_PATH}. */
export function registerReplay(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  program
    .command('replay')
    .summary('replay an LLM request trace through the plane and check the invariants')
    .description(DESCRIPTION)
    .argument(
      '[trace.csv]',
      'trace file: TIMESTAMP,ContextTokens,GeneratedTokens (default: the bundled Azure conversation trace, data/azure-llm-2023/conv.csv)',
    )
    .addOption(
      new Option('--tenants <count>', `tenants the rows are spread over, 1 to ${MAX_REPLAY_TENANTS}`)
        .argParser(wholeNumberBetween(1, MAX_REPLAY_TENANTS))
        .default(1),
    )
    .addOption(new Option('--seed <n>', 'seed of the Zipf tenant choice').argParser(seed).default(1))
    .addOption(new Option('--zipf-exponent <s>', 'Zipf exponent of the tenant choice').argParser(positiveNumber).default(1))
    .addOption(new Option('--max-concurrent <runs>', "every tenant's concurrent-run ceiling (default: unlimited)").argParser(amount))
    .addOption(new Option('--tokens-per-period <tokens>', "every tenant's token ceiling per period (default: unlimited)").argParser(amount))
    .addOption(
      new Option('--minor-units-per-period <minorUnits>', "every tenant's money ceiling per period (default: unlimited)").argParser(amount),
    )
    .addOption(new Option('--period <period>', 'billing period of the quotas (UTC)').choices(['daily', 'monthly']).default('monthly'))
    .addOption(new Option('--price-in <minorUnits>', 'minor units per context token').argParser(amount).default(3))
    .addOption(new Option('--price-out <minorUnits>', 'minor units per generated token').argParser(amount).default(15))
    .addOption(
      new Option('--max-output-tokens <tokens>', 'output bound each call declares in its budget').argParser(amount).default(1024),
    )
    .addOption(new Option('--store <url>', 'store URL: sqlite:<path>, <path>.db or postgres://… (default: a temporary SQLite file)'))
    .addOption(new Option('--keep-store', 'keep the temporary SQLite store and print where it is').default(false))
    .addOption(new Option('--url <url>', 'replay through a running quotaplane serve at this URL instead of a store'))
    .addOption(
      new Option('--key <key>', "with --url: an operator key for every tenant (keys create --tenant '*' --role operator)").env('QUOTAPLANE_KEY'),
    )
    .addOption(
      new Option(
        '--wait <ms>',
        'let each admission wait up to this many virtual ms for a slot (a waiting request starts when granted, keeping its duration)',
      ).argParser(wholeNumberBetween(0, MAX_REPLAY_WAIT_MS)),
    )
    .addOption(
      new Option(
        '--plane-max-concurrent <runs>',
        "the plane-wide ceiling on concurrent runs across every tenant (replaces the store's plane-wide ceiling)",
      ).argParser(amount),
    )
    .addOption(new Option('--json', 'print the report as one JSON document').default(false))
    .addHelpText('after', `\n${EXIT_STATUS_HELP}\n`)
    .configureOutput(outputFor(io, 'quotaplane replay --help'))
    .action(async (traceArgument: string | undefined, flags: ReplayFlags) => {
      const tracePath = traceArgument ?? BUNDLED_TRACE_PATH;
      if (flags.keepStore && flags.store !== undefined) {
        throw new UsageError('--keep-store applies only to the temporary store; drop --keep-store or drop --store');
      }
      if (flags.url !== undefined && (flags.store !== undefined || flags.keepStore)) {
        throw new UsageError('--url replays through a server, which has its own store; drop --store and --keep-store');
      }
      if (flags.url !== undefined && flags.key === undefined) {
        throw new UsageError("--url needs --key (or QUOTAPLANE_KEY): an operator key for every tenant");
      }
      if (flags.url === undefined && flags.key !== undefined) throw new UsageError('--key applies only with --url');
      if (flags.wait !== undefined && flags.url !== undefined) {
        throw new UsageError("--wait replays waiting admissions in the trace's virtual time, which needs the store itself; drop --url (use --store)");
      }
      const options: ReplayOptions = {
        tracePath,
        tenants: flags.tenants,
        seed: flags.seed,
        zipfExponent: flags.zipfExponent,
        maxConcurrent: flags.maxConcurrent,
        tokensPerPeriod: flags.tokensPerPeriod,
        minorUnitsPerPeriod: flags.minorUnitsPerPeriod,
        period: flags.period,
        priceIn: flags.priceIn,
        priceOut: flags.priceOut,
        maxOutputTokens: flags.maxOutputTokens,
        storeUrl: flags.store,
        keepStore: flags.keepStore,
        waitMs: flags.wait,
        planeMaxConcurrent: flags.planeMaxConcurrent,
      };
      // The trace reader, the stores and the progress bar load only here (lazy imports), so the
      // other commands start without them.
      const [{ openTrace }, { openReplayTarget }, { runReplay }, { runWaitingReplay }, { ReplayProgress }] = await Promise.all([
        import('../replay/trace-reader.js'),
        import('../replay/replay-store.js'),
        import('../replay/replay-run.js'),
        import('../replay/replay-wait.js'),
        import('../replay/replay-progress.js'),
      ]);
      // A missing trace is a usage error, found before any store is opened or migrated.
      await openTrace(tracePath);
      const opened = await (flags.url !== undefined && flags.key !== undefined
        ? remoteTarget(flags.url, flags.key)
        : openReplayTarget(options.storeUrl, options.keepStore)
      ).catch((error: unknown) => {
        if (isQuotaError(error, 'INVALID_ARGUMENT')) {
          // The store names its field `url`; on the command line that field is --store.
          throw new UsageError(`--store ${error.message.replace(/^url: /, '')}`);
        }
        throw error;
      });
      let report;
      try {
        const replay = options.waitMs === undefined ? runReplay : runWaitingReplay;
        report = await replay(options, opened.target, new ReplayProgress(io.stderr));
      } finally {
        await opened.close();
      }
      io.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : renderReplayTable(report));
      setExitStatus(report.ok ? EXIT.OK : EXIT.FINDING);
    });
}

// A malformed --url or --key is a usage error naming the flag, as a bad --store is.
async function remoteTarget(url: string, key: string): Promise<OpenedReplayTarget> {
  const { openRemoteReplayTarget } = await import('../replay/replay-remote.js');
  try {
    return openRemoteReplayTarget(url, key);
  } catch (error) {
    if (isQuotaError(error, 'INVALID_ARGUMENT')) throw new UsageError(`--${error.message}`);
    throw error;
  }
}
