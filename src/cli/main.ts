import { createRequire } from 'node:module';
import { Command, CommanderError } from 'commander';

import { isQuotaError } from '../core/errors.js';
import { outputFor, reflowDescriptions } from './command-output.js';
import { registerAttention } from './commands/attention.js';
import { registerAlerts } from './commands/alerts.js';
import { registerAudit } from './commands/audit.js';
import { registerCalls } from './commands/calls.js';
import { registerEvents } from './commands/events.js';
import { registerDeleteTenant } from './commands/delete-tenant.js';
import { registerHalt } from './commands/halt.js';
import { registerHalts } from './commands/halts.js';
import { registerKeys } from './commands/keys.js';
import { registerWebhooks } from './commands/webhooks.js';
import { registerLift } from './commands/lift.js';
import { registerMigrate } from './commands/migrate.js';
import { registerPrune } from './commands/prune.js';
import { registerQuota } from './commands/quota.js';
import { registerRelease } from './commands/release.js';
import { registerReplay } from './commands/replay.js';
import { registerReservations } from './commands/reservations.js';
import { registerRuns } from './commands/runs.js';
import { registerServe } from './commands/serve.js';
import { registerSettle } from './commands/settle.js';
import { registerStatus } from './commands/status.js';
import { registerSweep } from './commands/sweep.js';
import { EXIT, EXIT_STATUS_HELP, type ExitStatus } from './exit-status.js';
import { type CliIo, writeLine } from './io.js';
import { UsageError } from './usage-error.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * Runs the `quotaplane` CLI once, in process: `argv` are the arguments after the program name
 * (`['replay', 'conv.csv', '--json']`), and everything is written through `io`, never straight to
 * the process streams, so tests read exactly what a person would see. Resolves to the exit status
 * (see {@link EXIT}); it never calls `process.exit` and never rejects.
 *
 * Failures print one line on stderr: usage errors (a bad flag, argument or input file: status 2),
 * a store that cannot be used as configured (status 3),
 * a run or pass that does not exist or a settle that disagrees with its receipt (status 1), a
 * store or server that cannot be reached or used (status 4), or an internal fault (status 70).
 */
export async function main(argv: readonly string[], given: CliIo): Promise<number> {
  const io: CliIo = { ...given, jsonErrors: argv.includes('--json') };
  let status: ExitStatus = EXIT.OK;
  const program = new Command('quotaplane')
    .description(
      'Per-tenant admission control for AI-agent platforms: concurrent runs, spend per billing period, ' +
        'tool-call rates and scoped emergency halts, exact under concurrency.',
    )
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand('help [command]', 'show help for a command')
    .exitOverride()
    .showSuggestionAfterError(true)
    .configureOutput(outputFor(io, 'quotaplane --help'))
    .addHelpText('after', `\n${EXIT_STATUS_HELP}\n`);

  const setStatus = (next: ExitStatus): void => {
    status = next;
  };
  registerReplay(program, io, setStatus);
  registerServe(program, io, setStatus);
  registerKeys(program, io, setStatus);
  registerWebhooks(program, io, setStatus);
  registerHalt(program, io, setStatus);
  registerLift(program, io, setStatus);
  registerHalts(program, io, setStatus);
  registerStatus(program, io, setStatus);
  registerRuns(program, io, setStatus);
  registerReservations(program, io, setStatus);
  registerRelease(program, io, setStatus);
  registerDeleteTenant(program, io, setStatus);
  registerSettle(program, io, setStatus);
  registerAttention(program, io, setStatus);
  registerQuota(program, io, setStatus);
  registerCalls(program, io, setStatus);
  registerAudit(program, io, setStatus);
  registerEvents(program, io, setStatus);
  registerAlerts(program, io, setStatus);
  registerSweep(program, io, setStatus);
  registerMigrate(program, io, setStatus);
  registerPrune(program, io, setStatus);
  reflowDescriptions(program);

  try {
    await program.parseAsync([...argv], { from: 'user' });
    return status;
  } catch (error) {
    return failureStatus(error, io);
  }
}

/**
 * Prints one line for a failure on stderr and answers its exit status. With `--json` the line is
 * one JSON document, `{"error":{"code","message","exitStatus","field"?}}`, so a script reading
 * JSON never has to parse prose.
 */
function failureStatus(error: unknown, io: CliIo): ExitStatus {
  if (error instanceof CommanderError) {
    // Commander already printed its message (or the help) through configureOutput.
    return error.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  }
  const failure = describeFailure(error);
  if (io.jsonErrors === true) {
    const field = isQuotaError(error) && typeof error.details.field === 'string' ? { field: error.details.field } : {};
    writeLine(io.stderr, JSON.stringify({ error: { code: failure.code, message: failure.message, exitStatus: failure.status, ...field } }));
  } else {
    writeLine(io.stderr, failure.line);
  }
  return failure.status;
}

// The exit status, the code and the words of a failure.
function describeFailure(error: unknown): { status: ExitStatus; code: string; message: string; line: string } {
  if (error instanceof UsageError) {
    return { status: EXIT.USAGE, code: 'USAGE', message: error.message, line: `error: ${error.message}` };
  }
  if (isQuotaError(error)) {
    const plain = (status: ExitStatus, line = `error: ${error.message}`) => ({ status, code: error.code, message: error.message, line });
    switch (error.code) {
      case 'INVALID_ARGUMENT':
        return plain(EXIT.USAGE);
      case 'STORE_UNAVAILABLE':
      case 'STORE_CORRUPT':
      case 'SCHEMA_TOO_NEW':
        return plain(EXIT.STORE_UNREACHABLE);
      case 'STORE_MISCONFIGURED':
        return plain(EXIT.CONFIGURATION, `error: configuration: ${error.message}`);
      case 'CONFLICT':
      case 'NOT_FOUND':
        // A negative answer about what was named (no such run, a settle that disagrees), not a bug.
        return plain(EXIT.FINDING);
      case 'INTERNAL':
        return plain(EXIT.INTERNAL, `internal error (${error.code}): ${error.message}`);
    }
  }
  const text = error instanceof Error ? error.message : String(error);
  return { status: EXIT.INTERNAL, code: 'INTERNAL', message: text, line: `internal error: ${text}` };
}
