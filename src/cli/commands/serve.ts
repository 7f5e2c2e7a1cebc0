import { type Command, InvalidArgumentError, Option } from 'commander';
import { pino, type DestinationStream } from 'pino';

import type { SetExitStatus } from '../command-output.js';
import { outputFor } from '../command-output.js';
import { EXIT, EXIT_STATUS_HELP } from '../exit-status.js';
import { type CliIo, writeLine } from '../io.js';
import { listenFailureMessage } from '../serve/listen-failure.js';
import {
  CURRENCY_ENV,
  MINOR_UNITS_PER_UNIT_ENV,
  parseMinorUnitsPerUnit,
  parseIntervalMs,
  parsePort,
  parseShutdownTimeoutMs,
  PORT_ENV,
  resolveServeConfig,
  STORE_ENV,
  SWEEP_INTERVAL_ENV,
  type Environment,
} from '../serve/serve-config.js';
import { startServer, type StartedServer } from '../serve/start-server.js';

interface ServeFlags {
  store?: string;
  host?: string;
  port?: number;
  sweepIntervalMs?: number;
  shutdownTimeoutMs?: number;
  currency?: string;
  minorUnitsPerUnit?: number;
  logLevel: string;
}

const DESCRIPTION = `Serve the plane over HTTP (JSON under /v1, errors as application/problem+json).

Every request but /healthz, /readyz and /openapi.json carries 'Authorization: Bearer <key>'.
On a store with no API key at all, serve creates one operator key for every tenant and prints
it once. Make more with 'quotaplane keys create'.

Every --sweep-interval-ms (default 5000) it sweeps lapsed leases: a run whose process died loses
its slot (its hold stays until an operator settles or releases it) and is marked stranded. Any
number of servers may sweep one store. 0 turns the sweeper off in this process.

SIGTERM or SIGINT (Ctrl-C) stops it gracefully: the sweeper stops, in-flight requests finish
(for up to --shutdown-timeout-ms, default 10000; connections still open then are cut), then the
store is closed.

A port in use or an address this machine cannot listen on exits 4 with a message naming it.

The operator dashboard is at /ui/ on the same port (sign in with an operator key). It shows
money in the deployment's minor units divided by --minor-units-per-unit (default 1000000) as
--currency (default USD): micro-USD unless told otherwise.

Environment: ${STORE_ENV} (store URL), ${PORT_ENV} (port), ${SWEEP_INTERVAL_ENV} (sweep
interval in ms), ${CURRENCY_ENV}, ${MINOR_UNITS_PER_UNIT_ENV}; flags win.`;

/** Ways `serve` can be asked to stop: the process signals, by default. */
export type StopSignal = () => Promise<string>;

/** Resolves with the name of the first of SIGTERM or SIGINT the process receives. */
export const processStopSignal: StopSignal = () =>
  new Promise((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      resolve(signal);
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.once('SIGTERM', onTerm);
    process.once('SIGINT', onInt);
  });

/**
 * Registers `quotaplane serve [--store URL] [--host H] [--port P] [--sweep-interval-ms MS]` (issue
 * #4 item 1, issue #5 item 2). `env` is where `QUOTAPLANE_STORE`, `QUOTAPLANE_PORT` and
 * `QUOTAPLANE_SWEEP_INTERVAL_MS` are read (default `process.env`); `stopSignal`
 * says when to stop (default: SIGTERM or SIGINT).
 */
export function registerServe(
  program: Command,
  io: CliIo,
  setExitStatus: SetExitStatus,
  options: { env?: Environment; stopSignal?: StopSignal } = {},
): void {
  program
    .command('serve')
    .summary('serve the plane over HTTP (npm start)')
    .description(DESCRIPTION)
    .addOption(new Option('--store <url>', `store URL: sqlite:<path>, <path>.db or postgres://… (default: $${STORE_ENV} or sqlite:./quotaplane.db)`))
    .addOption(new Option('--host <host>', 'address to listen on (default: 127.0.0.1, this machine only)'))
    .addOption(new Option('--port <port>', `port to listen on, 0 for any free one (default: $${PORT_ENV} or 7070)`).argParser(portOption))
    .addOption(
      new Option('--sweep-interval-ms <ms>', `pause between sweeps of lapsed leases, 0 for none (default: $${SWEEP_INTERVAL_ENV} or 5000)`).argParser(
        intervalOption,
      ),
    )
    .addOption(
      new Option('--shutdown-timeout-ms <ms>', 'on SIGTERM, how long open connections may drain before they are cut (default: 10000)').argParser(
        shutdownTimeoutOption,
      ),
    )
    .addOption(new Option('--currency <code>', `currency the dashboard shows money in, ISO 4217 (default: $${CURRENCY_ENV} or USD)`))
    .addOption(
      new Option('--minor-units-per-unit <n>', `minor units in one currency unit, a power of ten (default: $${MINOR_UNITS_PER_UNIT_ENV} or 1000000, micro-USD)`).argParser(
        minorUnitsOption,
      ),
    )
    .addOption(
      new Option('--log-level <level>', 'request log level (JSON lines on stdout)')
        .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
        .default('info'),
    )
    .addHelpText('after', `\n${EXIT_STATUS_HELP}\n`)
    .configureOutput(outputFor(io, 'quotaplane serve --help'))
    .action(async (flags: ServeFlags) => {
      const config = resolveServeConfig(flags, options.env ?? process.env);
      const logger = pino({ level: flags.logLevel, base: { service: 'quotaplane' } }, io.stdout as unknown as DestinationStream);
      // Listen for the stop before the port opens, so a signal sent the moment it is announced is not lost.
      const stopped = (options.stopSignal ?? processStopSignal)();
      let server: StartedServer;
      try {
        server = await startServer(config, { logger });
      } catch (error) {
        const message = listenFailureMessage(error, config.host, config.port);
        if (message === null) throw error;
        writeLine(io.stderr, `error: ${message}`);
        setExitStatus(EXIT.STORE_UNREACHABLE);
        return;
      }
      if (server.firstKey !== null) printFirstKey(io, server.firstKey.secret, server.firstKey.key.id);
      if (server.noUsableKey) {
        writeLine(
          io.stderr,
          "quotaplane: warning: every API key in this store is revoked, so no request can authenticate; create one with 'quotaplane keys create --role operator --tenant \"*\" --name <name>'",
        );
      }
      const sweeping = config.sweepIntervalMs === 0 ? 'no sweeper' : `sweeping lapsed leases every ${config.sweepIntervalMs} ms`;
      writeLine(io.stdout, `quotaplane: serving ${server.url} on store ${config.storeUrl}, ${sweeping} (SIGTERM or Ctrl-C stops it)`);
      writeLine(io.stdout, `quotaplane: operator dashboard at ${server.url}/ui/ (money shown in ${config.currency}, ${config.minorUnitsPerUnit} minor units to one)`);
      const signal = await stopped;
      writeLine(io.stdout, `quotaplane: ${signal}: stopping the sweeper, finishing in-flight requests, then closing the store`);
      await server.close();
      writeLine(io.stdout, 'quotaplane: stopped');
      setExitStatus(EXIT.OK);
    });
}

function portOption(value: string): number {
  const port = parsePort(value);
  if (port === null) throw new InvalidArgumentError('Use a port number from 0 to 65535.');
  return port;
}

function intervalOption(value: string): number {
  const intervalMs = parseIntervalMs(value);
  if (intervalMs === null) throw new InvalidArgumentError('Use a whole number of milliseconds, 0 to turn the sweeper off.');
  return intervalMs;
}

function minorUnitsOption(value: string): number {
  const scale = parseMinorUnitsPerUnit(value);
  if (scale === null) throw new InvalidArgumentError('Use a power of ten from 1 to 1000000000000, such as 100 for cents or 1000000 for micro-units.');
  return scale;
}

function shutdownTimeoutOption(value: string): number {
  const timeoutMs = parseShutdownTimeoutMs(value);
  if (timeoutMs === null) throw new InvalidArgumentError('Use a whole number of milliseconds up to 2147483647.');
  return timeoutMs;
}

function printFirstKey(io: CliIo, secret: string, id: string): void {
  writeLine(io.stdout, `quotaplane: the store had no API key, so this operator key for every tenant was created (${id}, name first-operator).`);
  writeLine(io.stdout, 'It is shown only this once: store it now.');
  writeLine(io.stdout);
  writeLine(io.stdout, `    ${secret}`);
  writeLine(io.stdout);
  writeLine(io.stdout, "Send it as 'Authorization: Bearer <key>'; make narrower keys with 'quotaplane keys create'.");
}
