import { type Command, Option } from 'commander';

import { isQuotaError } from '../../core/errors.js';
import { isIdentifier } from '../../core/identifiers.js';
import { openStore } from '../../store/open-store.js';
import { outputFor } from '../command-output.js';
import { EXIT_STATUS_HELP } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { wholeNumber } from '../options.js';
import { UsageError } from '../usage-error.js';
import type { OperatorTarget } from './operator-target.js';
import { storeOperatorTarget } from './store-operator-target.js';

/** The environment variable naming the store when `--store` is absent (the same one `serve` reads). */
export const STORE_ENV = 'QUOTAPLANE_STORE';

/** The flags every operator command shares. */
export interface TargetFlags {
  readonly store?: string;
  readonly actor?: string;
  readonly json: boolean;
}

/** Whether a command writes (then, on a store, `--actor` is required) or only reads. */
export type CommandAccess = 'writes' | 'reads';

/**
 * Adds the shared flags to an operator command: `--store`, `--actor` (for commands that write),
 * `--json`, its help footer with the exit statuses, and output through `io`.
 */
export function operatorCommand(program: Command, name: string, io: CliIo, access: CommandAccess): Command {
  const path = program.parent === null ? name : `${program.name()} ${name}`;
  const command = program
    .command(name)
    .addOption(new Option('--store <url>', `store URL: sqlite:<path>, <path>.db or postgres://… (default: $${STORE_ENV})`))
    .addOption(new Option('--json', 'print one JSON document instead of text').default(false))
    .addHelpText('after', `\n${EXIT_STATUS_HELP}\n`)
    .configureOutput(outputFor(io, `quotaplane ${path} --help`));
  if (access === 'writes') {
    command.addOption(new Option('--actor <name>', 'who acts; required, recorded as asserted (never taken from $USER)'));
  }
  return command;
}

/** The `--limit <n>` option of a listing: 1 … 10 000, default 100. */
export function limitOption(): Option {
  return new Option('--limit <n>', 'list at most this many (exit status 5 when more were there)').argParser(wholeNumber(1)).default(100);
}

/**
 * Opens the target a command acts on and runs `body` with it, closing it afterwards. On a store,
 * a command that writes needs `--actor`, checked before the store is opened so a usage mistake
 * never touches it. A malformed `--store` is a usage error naming the flag; an unreachable store
 * surfaces as `STORE_UNAVAILABLE` (exit status 4).
 */
export async function withTarget<T>(
  flags: TargetFlags,
  access: CommandAccess,
  body: (target: OperatorTarget) => Promise<T>,
): Promise<T> {
  const url = flags.store ?? process.env[STORE_ENV];
  if (url === undefined || url === '') {
    throw new UsageError(`name the store with --store <url> (or $${STORE_ENV}): sqlite:<path>, <path>.db or postgres://…`);
  }
  let by = null;
  if (access === 'writes') {
    if (flags.actor === undefined) {
      throw new UsageError('this command writes, so it needs --actor <name> (recorded as asserted; never taken from $USER)');
    }
    if (!isIdentifier(flags.actor)) throw new UsageError(`--actor must be 1-200 printable characters, got ${JSON.stringify(flags.actor)}`);
    by = { actor: flags.actor, basis: 'asserted' } as const;
  }
  const store = await openStore(url).catch((error: unknown) => {
    if (isQuotaError(error, 'INVALID_ARGUMENT')) throw new UsageError(`--store: ${error.message}`);
    throw error;
  });
  const target = storeOperatorTarget(store, url, by);
  try {
    return await body(target);
  } finally {
    await target.close();
  }
}

/** The tenants a command covers: `--tenant`, or every tenant of the target. */
export async function tenantsOf(target: OperatorTarget, tenant: string | undefined): Promise<string[]> {
  return tenant === undefined ? target.tenants() : [tenant];
}
