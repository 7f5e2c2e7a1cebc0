import { type Command, Option } from 'commander';

import type { MigrationReport } from '../../store/migrations.js';
import { redactStoreUrl } from '../../store/store-url.js';
import { outputFor, type SetExitStatus } from '../command-output.js';
import { EXIT, EXIT_STATUS_HELP } from '../exit-status.js';
import { type CliIo, writeLine } from '../io.js';
import { resolveStoreUrl, STORE_ENV, type Environment } from '../serve/serve-config.js';

/**
 * Registers `quotaplane migrate [--store URL] [--json]`: the one explicit way,
 * besides `serve`'s start, to create a store or bring one an older quotaplane wrote up to this
 * build's schema. Read-only commands never do either; they refuse such a store with exit 3 and
 * name this command. Prints the versions found and reached and the migrations applied.
 */
export function registerMigrate(program: Command, io: CliIo, setExitStatus: SetExitStatus, options: { env?: Environment } = {}): void {
  const env = options.env ?? process.env;
  program
    .command('migrate')
    .summary("create a store, or bring one an older quotaplane wrote to this build's schema")
    .description(
      "Create the store at --store if there is none, or apply the migrations an older quotaplane's store lacks. " +
        'Read-only commands never create or migrate a store, and serve migrates on start. ' +
        "Another application's database or schema is refused and left as it was (exit 3).",
    )
    .addOption(new Option('--store <url>', `store URL: sqlite:<path>, <path>.db or postgres://… (default: $${STORE_ENV} or sqlite:./quotaplane.db)`))
    .addOption(new Option('--json', 'print one JSON document').default(false))
    .addHelpText('after', `\n${EXIT_STATUS_HELP}\n`)
    .configureOutput(outputFor(io, 'quotaplane migrate --help'))
    .action(async (flags: { store?: string; json: boolean }) => {
      const url = resolveStoreUrl(flags.store, env);
      // The store drivers load only when the command acts (a lazy import).
      const { openStore } = await import('../../store/open-store.js');
      const { unvalidated } = await import('../../store/validated-store.js');
      const store = await openStore(url);
      try {
        // The report is the adapter's own member, under the validated() wrapper openStore answers.
        const report = (unvalidated(store) as { migration?: MigrationReport }).migration ?? null;
        if (flags.json) {
          io.stdout.write(`${JSON.stringify({ store: redactStoreUrl(url), migration: report }, null, 2)}\n`);
        } else if (report === null) {
          writeLine(io.stdout, `the ${store.backend} store at ${redactStoreUrl(url)} is open; it reports no migration`);
        } else if (report.applied.length === 0) {
          writeLine(io.stdout, `the ${store.backend} store at ${redactStoreUrl(url)} is at schema version ${report.toVersion}: nothing to migrate`);
        } else {
          writeLine(
            io.stdout,
            `migrated the ${store.backend} store at ${redactStoreUrl(url)} from schema version ${report.fromVersion} to ${report.toVersion} ` +
              `(applied ${report.applied.map((step) => `migration ${step.version}, ${step.name}`).join('; ')})`,
          );
        }
      } finally {
        await store.close();
      }
      setExitStatus(EXIT.OK);
    });
}
