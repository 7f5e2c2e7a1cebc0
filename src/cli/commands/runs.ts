import { Option, type Command } from 'commander';

import { RUN_STATUSES, type RunStatus } from '../../store/types.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { printTenantListing } from '../operator/across-tenants.js';
import { instant } from '../../core/instant.js';
import { duration } from '../operator/format.js';
import { limitOption, operatorCommand, tenantsOf, withTarget, type TargetFlags } from '../operator/target-options.js';
import { UsageError } from '../usage-error.js';
import { tenantName } from '../options.js';

interface RunsFlags extends TargetFlags {
  readonly tenant?: string;
  readonly stranded: boolean;
  readonly status?: string[];
  readonly all: boolean;
  readonly limit: number;
}

/** The runs listed when no status is asked for: every run that is not closed. */
const OPEN_STATUSES: readonly RunStatus[] = ['running', 'paused', 'withheld', 'stranded'];

function statusesOf(flags: RunsFlags): readonly RunStatus[] | undefined {
  const chosen = [flags.stranded, flags.status !== undefined, flags.all].filter(Boolean).length;
  if (chosen > 1) throw new UsageError('give one of --stranded, --status and --all');
  if (flags.all) return undefined;
  if (flags.stranded) return ['stranded'];
  if (flags.status === undefined) return OPEN_STATUSES;
  for (const status of flags.status) {
    if (!(RUN_STATUSES as readonly string[]).includes(status)) {
      const separated = status.includes(',') ? ' (give several separated by spaces: --status stranded withheld)' : '';
      throw new UsageError(`--status must be one of ${RUN_STATUSES.join(', ')}${separated}; got ${JSON.stringify(status)}`);
    }
  }
  return flags.status as RunStatus[];
}

/** Registers `quotaplane runs [--tenant T] [--stranded | --status S… | --all] [--limit N]`. */
export function registerRuns(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'runs', io, 'reads')
    .summary('list runs (default: the open ones), or --stranded the ones whose process died')
    .description(
      'List the run registry of one tenant or every tenant, by run id: status and since when, the\n' +
        "latest pass, whether it holds a slot, and when that pass's lease lapses. By default the open\n" +
        'runs (running, paused, withheld, stranded); --stranded lists only runs the sweep found dead.',
    )
    .addOption(new Option('--tenant <tenant>', 'one tenant (default: every tenant)').argParser(tenantName))
    .addOption(new Option('--stranded', 'only stranded runs (their lease lapsed; slot released, hold kept)').default(false))
    .addOption(new Option('--status <status...>', `only these statuses: ${RUN_STATUSES.join(', ')}`))
    .addOption(new Option('--all', 'every run, concluded and released included').default(false))
    .addOption(limitOption())
    .action(async (flags: RunsFlags) => {
      const statuses = statusesOf(flags);
      const truncated = await withTarget(flags, 'reads', async (target) => {
        const nowMs = Date.now();
        return printTenantListing(io, flags.json, {
          tenants: await tenantsOf(target, flags.tenant),
          limit: flags.limit,
          fetch: async (tenant, want) => {
            const page = await target.runs({ tenant, statuses, limit: want });
            return { items: page.runs, truncated: page.truncated };
          },
          member: 'runs',
          empty: 'no runs',
          header: ['TENANT', 'RUN', 'STATUS', 'FOR', 'EPOCH', 'SLOT', 'LEASE UNTIL'],
          row: (run) => [
            run.tenant,
            run.run,
            run.status,
            duration(Math.max(0, nowMs - run.statusSinceMs)),
            String(run.lastEpoch),
            run.holdsSlot ? 'yes' : 'no',
            instant(run.leaseExpiresAtMs),
          ],
        });
      });
      setExitStatus(truncated ? EXIT.TRUNCATED : EXIT.OK);
    });
}
