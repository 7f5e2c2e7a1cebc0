import { type Command, Option } from 'commander';

import { isQuotaError } from '../../core/errors.js';
import { isIdentifier } from '../../core/identifiers.js';
import { mintApiKey } from '../../http/api-key-secret.js';
import { storeApiKeyAdmin, type ApiKeyAdmin } from '../../plane/api-key-admin.js';
import { ALL_TENANTS, type ApiKeyRecord, type ApiKeyRole } from '../../store/api-keys.js';
import type { SetExitStatus } from '../command-output.js';
import { outputFor } from '../command-output.js';
import { EXIT, EXIT_STATUS_HELP } from '../exit-status.js';
import { type CliIo, writeLine } from '../io.js';
import { instant } from '../../core/instant.js';
import { renderTable } from '../operator/format.js';
import { inCliTerms, newTenantOption } from '../operator/new-tenant.js';
import { redactStoreUrl } from '../../store/store-url.js';
import { chooseTarget, KEY_ENV, URL_ENV } from '../operator/target-choice.js';
import { DEFAULT_STORE_URL, STORE_ENV, type Environment } from '../serve/serve-config.js';
import { storeApiKeys } from '../serve/store-api-keys.js';
import { UsageError } from '../usage-error.js';
import { AGE_EXPECTED, ageWithUnit } from '../options.js';

interface TargetFlags {
  store?: string;
  url?: string;
  key?: string;
  actor?: string;
  json: boolean;
}

interface CreateFlags extends TargetFlags {
  tenant: string;
  role: ApiKeyRole;
  name?: string;
  newTenant: boolean;
  expiresIn?: number;
}

interface RotateFlags extends TargetFlags {
  overlap: number;
  expiresIn?: number;
}

/**
 * Registers `quotaplane keys create|list|rotate|revoke`: API keys of
 * the HTTP service, kept in the store as SHA-256 hashes, managed on a store (`--store`, who acts
 * named by `--actor`) or through a server (`--url`/`--key` with an operator key, recorded as the
 * key's name). `create` prints the key once. Creation and revocation are audit rows. `env` is
 * where `QUOTAPLANE_STORE`, `QUOTAPLANE_URL` and `QUOTAPLANE_KEY` are read (default `process.env`);
 * with none of them and no flag, the store is `sqlite:./quotaplane.db`.
 */
export function registerKeys(program: Command, io: CliIo, setExitStatus: SetExitStatus, options: { env?: Environment } = {}): void {
  const env = options.env ?? process.env;
  const keys = program
    .command('keys')
    .summary('create, list, rotate and revoke API keys of the HTTP service')
    .description(
      'API keys for `quotaplane serve`. A runner key acts for its own tenant only; an operator key for ' +
        `one tenant, or for every tenant with --tenant '${ALL_TENANTS}'. Only a hash of each key is stored: ` +
        'a key is shown once, when it is created. Each verb works on a store (--store, SQLite or PostgreSQL) ' +
        'or through a running server (--url with an operator --key); creating, rotating and revoking are audited.',
    )
    .configureOutput(outputFor(io, 'quotaplane keys --help'));

  const targetOptions = (command: Command, writes: boolean): Command => {
    command
      .addOption(new Option('--store <url>', `a store: sqlite:<path>, <path>.db or postgres://… (default: $${STORE_ENV}, else ${DEFAULT_STORE_URL})`))
      .addOption(new Option('--url <url>', `through a running quotaplane serve instead (default: $${URL_ENV})`))
      .addOption(new Option('--key <key>', `with --url: an operator key; the server records its name (default: $${KEY_ENV})`))
      .addOption(new Option('--json', 'print one JSON document').default(false));
    if (writes) command.addOption(new Option('--actor <name>', 'with --store: who acts, recorded in the audit log as asserted (required there)'));
    return command;
  };

  targetOptions(
    keys
      .command('create')
      .summary('create a key and print it once (audited as key.create)')
      .description(
        'Create an API key and print it once (audited as key.create). A key for a tenant with no quota and no\n' +
          "history is refused (exit 1, naming the nearest known tenant) unless --new-tenant says it is new; a key\n" +
          `of every tenant ('${ALL_TENANTS}') names no tenant.`,
      )
      .requiredOption('--tenant <tenant>', `the tenant it acts for; '${ALL_TENANTS}' for every tenant (operator keys only)`)
      .addOption(new Option('--role <role>', 'runner (run lifecycle of its tenant) or operator (quotas, halts, listings)').choices(['runner', 'operator']).makeOptionMandatory())
      .option('--name <name>', 'who acts with it, recorded on halts, lifts and quota changes (default: the key id)')
      .addOption(new Option('--expires-in <age>', `refuse the key (401) this long after it is made: ${AGE_EXPECTED} (default: never)`).argParser(ageWithUnit))
      .addOption(newTenantOption()),
    true,
  )
    .addHelpText('after', `\n${EXIT_STATUS_HELP}\n`)
    .configureOutput(outputFor(io, 'quotaplane keys create --help'))
    .action(async (flags: CreateFlags) => {
      if (flags.role === 'runner' && flags.tenant === ALL_TENANTS) {
        throw new UsageError(`--tenant: a runner key acts for one tenant; name it, or use --role operator for '${ALL_TENANTS}'`);
      }
      await withKeyAdmin(flags, env, 'create', async (admin) => {
        const created = await admin.create({ tenant: flags.tenant, role: flags.role, name: flags.name, newTenant: flags.newTenant, expiresInMs: flags.expiresIn });
        if (flags.json) {
          io.stdout.write(`${JSON.stringify(created, null, 2)}\n`);
        } else {
          writeLine(io.stdout, `created ${created.id}: ${describeKey(created)}, name ${created.name}${expiryText(created.expiresAtMs)}`);
          writeSecret(io, created.key);
        }
      });
      setExitStatus(EXIT.OK);
    });

  targetOptions(keys.command('list').summary('list every key (never the keys themselves), revoked ones included'), false)
    .configureOutput(outputFor(io, 'quotaplane keys list --help'))
    .action(async (flags: TargetFlags) => {
      await withKeyAdmin(flags, env, 'read', async (admin) => {
        const listed = await admin.list();
        if (flags.json) {
          io.stdout.write(`${JSON.stringify({ keys: listed }, null, 2)}\n`);
          return;
        }
        if (listed.length === 0) {
          writeLine(io.stdout, "no keys; 'quotaplane serve' creates the first, or use 'quotaplane keys create'");
          return;
        }
        const when = (ms: number | null) => (ms === null ? '' : instant(ms));
        io.stdout.write(
          renderTable(
            ['ID', 'NAME', 'ROLE', 'TENANT', 'CREATED', 'EXPIRES', 'LAST USED', 'REVOKED'],
            listed.map((key) => [key.id, key.name, key.role, key.tenant, instant(key.createdAtMs), when(key.expiresAtMs), when(key.lastUsedAtMs), when(key.revokedAtMs)]),
          ),
        );
        writeLine(io.stdout, 'LAST USED is coarse: a server records a key\'s use at most once a minute.');
      });
      setExitStatus(EXIT.OK);
    });

  targetOptions(
    keys
      .command('rotate')
      .summary('replace a key: a new one with its name, role and tenant, printed once; the old one expires after --overlap (audited as key.rotate)')
      .argument('<id>', 'the key id (key_…), as keys list shows it')
      .addOption(
        new Option('--overlap <age>', `how long the old key stays valid beside the new one: ${AGE_EXPECTED}, or 0 to end it now`)
          .argParser(overlapAge)
          .makeOptionMandatory(),
      )
      .addOption(new Option('--expires-in <age>', "the new key's expiry (default: the old key's lifetime, or never)").argParser(ageWithUnit)),
    true,
  )
    .addHelpText('after', `\nExit status 1 when no usable key has that id.\n`)
    .configureOutput(outputFor(io, 'quotaplane keys rotate --help'))
    .action(async (id: string, flags: RotateFlags) => {
      await withKeyAdmin(flags, env, 'rotate', async (admin) => {
        const rotated = await admin.rotate(id, { overlapMs: flags.overlap, expiresInMs: flags.expiresIn });
        if (flags.json) {
          io.stdout.write(`${JSON.stringify(rotated, null, 2)}\n`);
          return;
        }
        writeLine(io.stdout, `rotated ${id}: it is accepted until ${instant(rotated.old.expiresAtMs)}`);
        writeLine(io.stdout, `created ${rotated.created.id}: ${describeKey(rotated.created)}, name ${rotated.created.name}${expiryText(rotated.created.expiresAtMs)}`);
        writeSecret(io, rotated.created.key);
      });
      setExitStatus(EXIT.OK);
    });

  targetOptions(
    keys
      .command('revoke')
      .summary('revoke a key: every request with it answers 401 from now on (audited as key.revoke)')
      .argument('<id>', 'the key id (key_…), as keys list shows it'),
    true,
  )
    .addHelpText('after', '\nExit status 1 when no key has that id.\n')
    .configureOutput(outputFor(io, 'quotaplane keys revoke --help'))
    .action(async (id: string, flags: TargetFlags) => {
      let status: typeof EXIT.OK | typeof EXIT.FINDING = EXIT.OK;
      await withKeyAdmin(flags, env, 'revoke', async (admin) => {
        const { outcome } = await admin.revoke(id);
        if (outcome === 'not-found') status = EXIT.FINDING;
        if (flags.json) {
          io.stdout.write(`${JSON.stringify({ id, outcome }, null, 2)}\n`);
        } else {
          const text = { revoked: `revoked ${id}`, 'already-revoked': `${id} was already revoked`, 'not-found': `no key has the id ${id}` }[outcome];
          writeLine(outcome === 'not-found' ? io.stderr : io.stdout, text);
        }
      });
      setExitStatus(status);
    });
}

// The key admin of the target: through a server, or on a store (created only by `keys create`,
// which may make the first store; listing or revoking at a mistyped path must not).
async function withKeyAdmin(flags: TargetFlags, env: Environment, verb: 'create' | 'revoke' | 'rotate' | 'read', body: (admin: ApiKeyAdmin) => Promise<void>): Promise<void> {
  const nothingNamed = [flags.store, flags.url, env[STORE_ENV], env[URL_ENV]].every((value) => value === undefined || value === '');
  const choice = nothingNamed ? { kind: 'store' as const, url: DEFAULT_STORE_URL } : chooseTarget(flags, env);
  if (choice.kind === 'server') {
    // The HTTP client and the store drivers load only when the command acts (lazy imports).
    const { createClient } = await import('../../client/create-client.js');
    let client;
    try {
      client = createClient({ url: choice.url, key: choice.key });
    } catch (error) {
      if (isQuotaError(error, 'INVALID_ARGUMENT')) throw new UsageError(`--${error.details.field === 'key' ? 'key' : 'url'}: ${error.message}`);
      throw error;
    }
    await body(client.keys).catch((error: unknown) => {
      throw inCliTerms(error, `server ${client.url}`);
    });
    return;
  }
  let by = null;
  if (verb !== 'read') {
    if (flags.actor === undefined) throw new UsageError(`keys ${verb} writes, so on a store it needs --actor <name> (recorded in the audit log as asserted; never taken from $USER)`);
    if (!isIdentifier(flags.actor)) throw new UsageError(`--actor must be 1-200 printable characters, got ${JSON.stringify(flags.actor)}`);
    by = { actor: flags.actor, basis: 'asserted' as const };
  }
  const [{ openStore }, { openExistingStore }] = await Promise.all([import('../../store/open-store.js'), import('../open-existing-store.js')]);
  const store = verb === 'create' ? await openStore(choice.url) : await openExistingStore(choice.url);
  try {
    await body(storeApiKeyAdmin({ store, keys: storeApiKeys(store), by, mint: mintApiKey, nowMs: () => Date.now() }));
  } catch (error) {
    throw inCliTerms(error, `store ${redactStoreUrl(choice.url)}`);
  } finally {
    await store.close();
  }
}

function writeSecret(io: CliIo, secret: string): void {
  writeLine(io.stdout, 'The key is shown only this once: store it now.');
  writeLine(io.stdout);
  writeLine(io.stdout, `    ${secret}`);
  writeLine(io.stdout);
}

function expiryText(expiresAtMs: number | null): string {
  return expiresAtMs === null ? '' : `, expires ${instant(expiresAtMs)}`;
}

// An overlap may be 0 (the old key ends now); otherwise an age with a unit.
function overlapAge(value: string): number {
  return value.trim() === '0' ? 0 : ageWithUnit(value);
}

function describeKey(key: Pick<ApiKeyRecord, 'role' | 'tenant'>): string {
  const tenant = key.tenant === ALL_TENANTS ? 'every tenant' : `tenant '${key.tenant}'`;
  return `${key.role} key for ${tenant}`;
}
