import { type Command, Option } from 'commander';

import { mintApiKey } from '../../http/api-key-secret.js';
import { ALL_TENANTS, type ApiKeyRecord, type ApiKeyRole } from '../../store/api-keys.js';
import { openStore } from '../../store/open-store.js';
import { openExistingStore } from '../open-existing-store.js';
import type { SetExitStatus } from '../command-output.js';
import { outputFor } from '../command-output.js';
import { EXIT, EXIT_STATUS_HELP } from '../exit-status.js';
import { type CliIo, writeLine } from '../io.js';
import { resolveStoreUrl, STORE_ENV, type Environment } from '../serve/serve-config.js';
import { storeApiKeys } from '../serve/store-api-keys.js';
import { UsageError } from '../usage-error.js';

interface StoreFlags {
  store?: string;
  json: boolean;
}

interface CreateFlags extends StoreFlags {
  tenant: string;
  role: ApiKeyRole;
  name?: string;
}

/**
 * Registers `quotaplane keys create|list|revoke` (issue #4 item 3): API keys of the HTTP service,
 * kept in the store as SHA-256 hashes. `create` prints the key once. `env` is where
 * `QUOTAPLANE_STORE` is read (default `process.env`).
 */
export function registerKeys(program: Command, io: CliIo, setExitStatus: SetExitStatus, options: { env?: Environment } = {}): void {
  const env = options.env ?? process.env;
  const keys = program
    .command('keys')
    .summary('create, list and revoke API keys of the HTTP service')
    .description(
      'API keys for `quotaplane serve`. A runner key acts for its own tenant only; an operator key for\n' +
        `one tenant, or for every tenant with --tenant '${ALL_TENANTS}'. Only a hash of each key is stored:\n` +
        'a key is shown once, when it is created.',
    )
    .configureOutput(outputFor(io, 'quotaplane keys --help'));

  const storeOption = () =>
    new Option('--store <url>', `store URL: sqlite:<path> or <path>.db (default: $${STORE_ENV} or sqlite:./quotaplane.db)`);
  const jsonOption = () => new Option('--json', 'print one JSON document').default(false);

  keys
    .command('create')
    .summary('create a key and print it once')
    .requiredOption('--tenant <tenant>', `the tenant it acts for; '${ALL_TENANTS}' for every tenant (operator keys only)`)
    .addOption(new Option('--role <role>', 'runner (run lifecycle of its tenant) or operator (quotas, halts, listings)').choices(['runner', 'operator']).makeOptionMandatory())
    .option('--name <name>', 'who acts with it, recorded on halts, lifts and quota changes (default: the key id)')
    .addOption(storeOption())
    .addOption(jsonOption())
    .addHelpText('after', `\n${EXIT_STATUS_HELP}\n`)
    .configureOutput(outputFor(io, 'quotaplane keys create --help'))
    .action(async (flags: CreateFlags) => {
      if (flags.role === 'runner' && flags.tenant === ALL_TENANTS) {
        throw new UsageError(`--tenant: a runner key acts for one tenant; name it, or use --role operator for '${ALL_TENANTS}'`);
      }
      await withKeys(resolveStoreUrl(flags.store, env), { create: true }, async (store) => {
        const minted = mintApiKey({ role: flags.role, tenant: flags.tenant, name: flags.name, atMs: Date.now() });
        await store.create(minted.key);
        const { hash: _hash, ...record } = minted.key;
        if (flags.json) {
          io.stdout.write(`${JSON.stringify({ ...record, revokedAtMs: null, key: minted.secret }, null, 2)}\n`);
        } else {
          writeLine(io.stdout, `created ${record.id}: ${describeKey(record)}, name ${record.name}`);
          writeLine(io.stdout, 'The key is shown only this once: store it now.');
          writeLine(io.stdout);
          writeLine(io.stdout, `    ${minted.secret}`);
          writeLine(io.stdout);
        }
      });
      setExitStatus(EXIT.OK);
    });

  keys
    .command('list')
    .summary('list every key (never the keys themselves), revoked ones included')
    .addOption(storeOption())
    .addOption(jsonOption())
    .configureOutput(outputFor(io, 'quotaplane keys list --help'))
    .action(async (flags: StoreFlags) => {
      await withKeys(resolveStoreUrl(flags.store, env), { create: false }, async (store) => {
        const listed = await store.list();
        if (flags.json) {
          io.stdout.write(`${JSON.stringify({ keys: listed }, null, 2)}\n`);
          return;
        }
        if (listed.length === 0) {
          writeLine(io.stdout, "no keys; 'quotaplane serve' creates the first, or use 'quotaplane keys create'");
          return;
        }
        io.stdout.write(
          renderTable(
            ['id', 'name', 'role', 'tenant', 'created', 'revoked'],
            listed.map((key) => [key.id, key.name, key.role, key.tenant, iso(key.createdAtMs), key.revokedAtMs === null ? '' : iso(key.revokedAtMs)]),
          ),
        );
      });
      setExitStatus(EXIT.OK);
    });

  keys
    .command('revoke')
    .summary('revoke a key: every request with it answers 401 from now on')
    .argument('<id>', 'the key id (key_…), as keys list shows it')
    .addOption(storeOption())
    .addOption(jsonOption())
    .addHelpText('after', '\nExit status 1 when no key has that id.\n')
    .configureOutput(outputFor(io, 'quotaplane keys revoke --help'))
    .action(async (id: string, flags: StoreFlags) => {
      let status: typeof EXIT.OK | typeof EXIT.FINDING = EXIT.OK;
      await withKeys(resolveStoreUrl(flags.store, env), { create: false }, async (store) => {
        const outcome = await store.revoke(id, Date.now());
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

// Only `keys create` may create the store; listing or revoking at a mistyped path must not.
async function withKeys(
  url: string,
  open: { create: boolean },
  body: (keys: ReturnType<typeof storeApiKeys>) => Promise<void>,
): Promise<void> {
  const store = open.create ? await openStore(url) : await openExistingStore(url);
  try {
    await body(storeApiKeys(store));
  } finally {
    await store.close();
  }
}

function describeKey(key: Pick<ApiKeyRecord, 'role' | 'tenant'>): string {
  const tenant = key.tenant === ALL_TENANTS ? 'every tenant' : `tenant '${key.tenant}'`;
  return `${key.role} key for ${tenant}`;
}

// Columns padded to their widest cell, two spaces apart, header first.
function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? '').length)));
  const line = (cells: readonly string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ').trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
