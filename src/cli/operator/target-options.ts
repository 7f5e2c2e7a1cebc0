import { type Command, Option } from 'commander';

import { isQuotaError, QuotaError } from '../../core/errors.js';
import { identifierProblem, isReservedTenant, RESERVED_TENANT_PREFIX } from '../../core/identifiers.js';
import { nearestTenant } from '../../core/known-tenant.js';
import type { Operator } from '../../core/operator.js';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../plane/operator-types.js';
import { redactStoreUrl } from '../../store/store-url.js';
import { outputFor } from '../command-output.js';
import { EXIT_STATUS_HELP } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { wholeNumberBetween } from '../options.js';
import { UsageError } from '../usage-error.js';
import { inCliTerms } from './new-tenant.js';
import { planeOperatorTarget, type OperatorTarget } from './operator-target.js';
import { STORE_ENV } from '../serve/serve-config.js';
import { chooseTarget, KEY_ENV, URL_ENV, type TargetChoiceFlags } from './target-choice.js';

/** The flags every operator command shares. */
export interface TargetFlags extends TargetChoiceFlags {
  readonly json: boolean;
}

/** Whether a command writes (then, on a store, `--actor` is required) or only reads. */
export type CommandAccess = 'writes' | 'reads';

/**
 * The operator a server target binds. The client never sends it: the server records the key's
 * name with basis `authenticated`. It only says "this command may write" to the shared target.
 */
const SERVER_RECORDS_THE_KEY: Operator = Object.freeze({ actor: 'api-key', basis: 'authenticated' });

/**
 * Adds the shared flags to an operator command: `--store`, or `--url` and `--key`; `--actor` (for
 * commands that write); `--json`; its help footer with the exit statuses; and output through `io`.
 */
export function operatorCommand(program: Command, name: string, io: CliIo, access: CommandAccess): Command {
  const path = commandPath(program, name);
  const command = program
    .command(name)
    .addOption(new Option('--store <url>', `act on a store: sqlite:<path>, <path>.db or postgres://… (default: $${STORE_ENV})`))
    .addOption(new Option('--url <url>', `act through a running quotaplane serve instead (default: $${URL_ENV})`))
    .addOption(new Option('--key <key>', `with --url: an operator key; the server records its name (default: $${KEY_ENV})`))
    .addOption(new Option('--json', 'print one JSON document instead of text').default(false))
    .addHelpText('after', `\n${EXIT_STATUS_HELP}\n`)
    .configureOutput(outputFor(io, `quotaplane ${path} --help`));
  if (access === 'writes') {
    command.addOption(new Option('--actor <name>', 'with --store: who acts; required, recorded as asserted (never taken from $USER)'));
  }
  return command;
}

// The words that call a command under `parent` (`quota plane set`), for its help hint.
function commandPath(parent: Command, name: string): string {
  const words = [name];
  for (let at: Command | null = parent; at !== null && at.parent !== null; at = at.parent) words.unshift(at.name());
  return words.join(' ');
}

/** The `--limit <n>` option of a listing: 1 … 1000, default 100. */
export function limitOption(): Option {
  return new Option('--limit <n>', `list at most this many, up to ${MAX_LIST_LIMIT} (exit status 5 when more were there)`)
    .argParser(wholeNumberBetween(1, MAX_LIST_LIMIT))
    .default(DEFAULT_LIST_LIMIT);
}

/**
 * Opens the target a command acts on ({@link chooseTarget}) and runs `body` with it, closing it
 * afterwards. On a store, a command that writes needs `--actor`, checked before the store is
 * opened so a usage mistake never touches it. A malformed `--store` or `--url` is a usage error
 * naming the flag; a tenant that does not exist is refused in the CLI's words (`inCliTerms`); a store or server that cannot be reached surfaces as `STORE_UNAVAILABLE`
 * (exit status 4).
 */
export async function withTarget<T>(
  flags: TargetFlags,
  access: CommandAccess,
  body: (target: OperatorTarget) => Promise<T>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<T> {
  const choice = chooseTarget(flags, env);
  const target = choice.kind === 'server' ? await serverTarget(choice.url, choice.key) : await storeTarget(choice.url, storeOperator(flags, access));
  try {
    return await body(target);
  } catch (error) {
    throw inCliTerms(error, target.description);
  } finally {
    await target.close();
  }
}

/**
 * Throws `NOT_FOUND` (exit status 1) naming `--tenant` when the target has never seen `tenant`:
 * no quota, run, halt or audit row (or, through a server, a tenant the key does not cover),
 * suggesting the nearest tenant it has (`nearestTenant`, docs/design/rules.md#l95-3). A
 * mistyped tenant would otherwise read as an empty one: no halts, no runs, nothing to sweep.
 * quotaplane's own audit chains (`quotaplane:…`) are tenants only to `audit` (`auditChains`).
 */
export async function requireKnownTenant(target: OperatorTarget, tenant: string, options: { readonly auditChains?: boolean } = {}): Promise<void> {
  if (isReservedTenant(tenant)) {
    if (options.auditChains === true) return;
    throw new QuotaError(
      'NOT_FOUND',
      `'${tenant}' is one of quotaplane's own audit chains, no tenant (names beginning '${RESERVED_TENANT_PREFIX}' are reserved); read it with 'quotaplane audit --tenant ${tenant}'`,
      { details: { field: 'tenant' } },
    );
  }
  const known = await target.tenants();
  if (known.includes(tenant)) return;
  // A deleted tenant exists no more, but its audit chain stays to be read (docs/design/rules.md#l95-6).
  if (options.auditChains === true && (await target.auditLog({ tenant, limit: 1 })).rows.length > 0) return;
  const suggestion = nearestTenant(tenant, known);
  throw new QuotaError(
    'NOT_FOUND',
    `tenant '${tenant}' is not in ${target.description}: it has no quota, run or halt there ` +
      `(${suggestion === null ? '' : `did you mean '${suggestion}'? `}check --tenant; 'quotaplane status' lists every tenant)`,
    { details: suggestion === null ? { field: 'tenant' } : { field: 'tenant', suggestion } },
  );
}

/** The tenants a command covers: `--tenant` (refused by {@link requireKnownTenant} when unknown), or every tenant of the target. */
export async function tenantsOf(target: OperatorTarget, tenant: string | undefined, options: { readonly auditChains?: boolean } = {}): Promise<string[]> {
  if (tenant === undefined) return target.tenants();
  await requireKnownTenant(target, tenant, options);
  return [tenant];
}

// On a store nothing verifies who acts, so a command that writes must be told who does.
function storeOperator(flags: TargetFlags, access: CommandAccess): Operator | null {
  if (access === 'reads') return null;
  if (flags.actor === undefined) {
    throw new UsageError('this command writes, so it needs --actor <name> (recorded as asserted; never taken from $USER)');
  }
  const problem = identifierProblem(flags.actor);
  if (problem !== null) throw new UsageError(`--actor: ${problem}`);
  return { actor: flags.actor, basis: 'asserted' };
}

// The store drivers, the plane and the HTTP client load only when a command acts (lazy imports),
// so `--help`, `--version` and a usage error answer without loading them.
async function storeTarget(url: string, by: Operator | null): Promise<OperatorTarget> {
  const [{ openExistingStore }, { createPlane }] = await Promise.all([import('../open-existing-store.js'), import('../../plane/create-plane.js')]);
  const store = await openExistingStore(url).catch((error: unknown) => {
    if (isQuotaError(error, 'INVALID_ARGUMENT')) throw new UsageError(`--store: ${error.message}`);
    throw error;
  });
  return planeOperatorTarget(createPlane({ store }), { description: `store ${redactStoreUrl(url)}`, by, close: () => store.close() });
}

async function serverTarget(url: string, key: string): Promise<OperatorTarget> {
  const { createClient } = await import('../../client/create-client.js');
  let client;
  try {
    client = createClient({ url, key });
  } catch (error) {
    if (isQuotaError(error, 'INVALID_ARGUMENT')) throw new UsageError(`--${error.details.field === 'key' ? 'key' : 'url'}: ${error.message}`);
    throw error;
  }
  return planeOperatorTarget(client, { description: `server ${client.url}`, by: SERVER_RECORDS_THE_KEY, close: async () => {} });
}

/**
 * The target flags a remedy printed for a person carries: the ones the command
 * was given, so the line runs as is. Never a secret: a key travels as `"$QUOTAPLANE_KEY"` and a
 * store URL with a password as `"$QUOTAPLANE_STORE"`. `writes` is what a remedy that writes adds
 * on a store (`--actor <name>`; a server records the key's name).
 */
export function remedyTargetFlags(flags: TargetChoiceFlags, env: Readonly<Record<string, string | undefined>>): { target: string; writes: string } {
  const choice = chooseTarget(flags, env);
  if (choice.kind === 'server') return { target: `--url ${choice.url} --key "$${KEY_ENV}"`, writes: '' };
  const store = redactStoreUrl(choice.url) === choice.url ? choice.url : `"$${STORE_ENV}"`;
  return { target: `--store ${store}`, writes: '--actor <name>' };
}
