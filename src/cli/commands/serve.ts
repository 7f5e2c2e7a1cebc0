import { type Command, InvalidArgumentError, Option } from 'commander';
import type { DestinationStream } from 'pino';

import type { SetExitStatus } from '../command-output.js';
import { outputFor } from '../command-output.js';
import { EXIT, EXIT_STATUS_HELP } from '../exit-status.js';
import { type CliIo, writeLine } from '../io.js';
import { listenFailureMessage } from '../serve/listen-failure.js';
import { defaultFirstKeyFile, FIRST_KEY_FILE_NAME, FIRST_KEY_TO_STDERR, reserveFirstKeyFile } from '../serve/first-key-file.js';
import { resolveServeConfig, type Environment, type ServeFlags } from '../serve/serve-config.js';
import { SERVE_SETTINGS, unknownQuotaplaneVariables, type ServeSetting } from '../serve/serve-settings.js';
import type { StartedServer } from '../serve/start-server.js';
import { parseStoreUrl, redactStoreUrl } from '../../store/store-url.js';
import { DEFAULT_PRUNE_INTERVAL_MS } from '../../plane/pruner.js';

const DESCRIPTION =
  'Serve the plane over HTTP (JSON under /v1, errors as application/problem+json). ' +
  "Every request but /healthz, /readyz and /openapi.json carries 'Authorization: Bearer <key>'. " +
  'On a store with no API key at all, serve creates one operator key for every tenant and shows it once, ' +
  `in a new file with mode 0600 (--first-key-file; default ${FIRST_KEY_FILE_NAME} beside the SQLite store file, else in the working directory; ` +
  "an existing file is never overwritten), or on stderr with --first-key-file -; make more with 'quotaplane keys create'.\n\n" +
  'The port listens at once: /healthz answers as soon as it does, and /readyz answers 503 until the store is open. ' +
  'A store that is not reachable yet is retried with backoff for up to --startup-timeout-ms; ' +
  'a store that cannot be used as configured (a wrong password, no such database) exits 3 at once.\n\n' +
  'Every --sweep-interval-ms it sweeps lapsed leases: a run whose process died loses its slot (its hold stays ' +
  'until an operator settles or releases it) and is marked stranded. Any number of servers may sweep one store.\n\n' +
  'With --prune-older-than (off by default) it also prunes every --prune-interval-ms: closed runs older than the age, ' +
  "with their passes and receipts, and rate instants no window counts, in audited batches (see 'quotaplane prune').\n\n" +
  'SIGTERM or SIGINT (Ctrl-C) stops it: /readyz turns 503 and no new connection is accepted at once, requests in ' +
  'flight get --shutdown-timeout-ms to finish, then the store is closed.\n\n' +
  'Stdout carries only JSON log lines (one per request, with its request id); notices for a person go to stderr. ' +
  'Every setting can also come from its environment variable (flags win); an unknown QUOTAPLANE_* variable is reported at start.\n\n' +
  'The operator dashboard is at /ui/ on the same port (sign in with an operator key). It shows money in the ' +
  "deployment's minor units divided by --minor-units-per-unit as --currency: micro-USD unless told otherwise.";

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
 * Registers `quotaplane serve` with every setting of `SERVE_SETTINGS`: a flag,
 * an environment variable read from `env` (default `process.env`) when the flag is absent, and a
 * default. `stopSignal` says when to stop (default: SIGTERM or SIGINT). Stdout carries only the
 * JSON log lines; every notice for a person, the first key included, goes to stderr.
 */
export function registerServe(
  program: Command,
  io: CliIo,
  setExitStatus: SetExitStatus,
  options: { env?: Environment; stopSignal?: StopSignal } = {},
): void {
  const command = program
    .command('serve')
    .summary('serve the plane over HTTP (npm start)')
    .description(DESCRIPTION);
  for (const setting of SERVE_SETTINGS as readonly ServeSetting[]) command.addOption(settingOption(setting));
  command
    .addHelpText('after', `\n${EXIT_STATUS_HELP}\n`)
    .configureOutput(outputFor(io, 'quotaplane serve --help'))
    .action(async (flags: ServeFlags) => {
      const env = options.env ?? process.env;
      const config = resolveServeConfig(flags, env);
      // A URL of no store's form is a usage error now, before the port opens (the store itself is opened after).
      parseStoreUrl(config.storeUrl);
      // Fastify, the plane and the logger load only here, so the other commands start without them.
      const [{ pino }, { startServer }] = await Promise.all([import('pino'), import('../serve/start-server.js')]);
      for (const unknown of unknownQuotaplaneVariables(env)) {
        const hint = unknown.closest === null ? '' : ` (did you mean ${unknown.closest}?)`;
        writeLine(io.stderr, `quotaplane: warning: ${unknown.name} is not a quotaplane setting and is ignored${hint}; see 'quotaplane serve --help'`);
      }
      const logger = pino({ level: config.logLevel ?? 'info', base: { service: 'quotaplane' } }, io.stdout as unknown as DestinationStream);
      // Listen for the stop before the port opens, so a signal sent the moment it is announced is
      // not lost; a stop during the wait for the store gives up waiting.
      const abort = new AbortController();
      const stopped = (options.stopSignal ?? processStopSignal)().then((signal) => {
        abort.abort();
        return signal;
      });
      const store = redactStoreUrl(config.storeUrl);
      let server: StartedServer;
      const firstKeyFile = config.firstKeyFile ?? defaultFirstKeyFile(config.storeUrl);
      try {
        server = await startServer(config, {
          logger,
          signal: abort.signal,
          ...(firstKeyFile === FIRST_KEY_TO_STDERR ? {} : { reserveFirstKey: () => reserveFirstKeyFile(firstKeyFile) }),
          onListening: (url) => writeLine(io.stderr, `quotaplane: listening on ${url}; opening the store ${store}`),
        });
      } catch (error) {
        const message = listenFailureMessage(error, config.host, config.port);
        if (message === null) throw error;
        writeLine(io.stderr, `error: ${message}`);
        setExitStatus(EXIT.STORE_UNREACHABLE);
        return;
      }
      if (server.firstKey !== null) {
        if (firstKeyFile === FIRST_KEY_TO_STDERR) printFirstKey(io, server.firstKey.secret, server.firstKey.key.id);
        else
          writeLine(
            io.stderr,
            `quotaplane: the store had no API key, so an operator key for every tenant was created (${server.firstKey.key.id}, name first-operator) and written to ${firstKeyFile} (mode 0600); it is not shown anywhere else.`,
          );
      }
      if (server.noOperatorKey) {
        writeLine(
          io.stderr,
          "quotaplane: warning: no API key in this store is an operator's, so the dashboard and operator routes accept no one; create one with 'quotaplane keys create --role operator --tenant \"*\" --name <name>'",
        );
      }
      if (server.noUsableKey) {
        writeLine(
          io.stderr,
          "quotaplane: warning: every API key in this store is revoked, so no request can authenticate; create one with 'quotaplane keys create --role operator --tenant \"*\" --name <name>'",
        );
      }
      const sweeping = config.sweepIntervalMs === 0 ? 'no sweeper' : `sweeping lapsed leases every ${config.sweepIntervalMs} ms`;
      const pruning =
        config.pruneOlderThanMs === undefined
          ? ''
          : `, pruning what closed over ${config.pruneOlderThanMs} ms ago every ${config.pruneIntervalMs ?? DEFAULT_PRUNE_INTERVAL_MS} ms`;
      writeLine(io.stderr, `quotaplane: serving ${server.url} on store ${store}, ${sweeping}${pruning} (SIGTERM or Ctrl-C stops it)`);
      writeLine(io.stderr, `quotaplane: operator dashboard at ${server.url}/ui/ (money shown in ${config.currency ?? 'USD'}, ${config.minorUnitsPerUnit ?? 1_000_000} minor units to one)`);
      const signal = await stopped;
      writeLine(io.stderr, `quotaplane: ${signal}: no new connections; finishing requests in flight, then closing the store`);
      await server.close();
      writeLine(io.stderr, 'quotaplane: stopped');
      setExitStatus(EXIT.OK);
    });
}

function settingOption(setting: ServeSetting): Option {
  const unit = setting.unit === '' ? '' : ` ${setting.unit}`;
  return new Option(`${setting.flag} ${setting.value}`, `${setting.description} (env ${setting.env}; default ${setting.shownDefault}${unit})`).argParser(
    (value: string) => {
      const parsed = setting.parse(value);
      if (parsed === null) {
        const problem = setting.problem?.(value);
        throw new InvalidArgumentError(problem === undefined ? `Use ${setting.expected}.` : `${problem}; use ${setting.expected}.`);
      }
      return parsed;
    },
  );
}

function printFirstKey(io: CliIo, secret: string, id: string): void {
  writeLine(io.stderr, `quotaplane: the store had no API key, so this operator key for every tenant was created (${id}, name first-operator).`);
  writeLine(io.stderr, 'It is shown only this once: store it now.');
  writeLine(io.stderr);
  writeLine(io.stderr, `    ${secret}`);
  writeLine(io.stderr);
  writeLine(io.stderr, "Send it as 'Authorization: Bearer <key>'; make narrower keys with 'quotaplane keys create'.");
}
