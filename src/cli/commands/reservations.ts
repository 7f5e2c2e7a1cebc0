import { Option, type Command } from 'commander';

import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { printTenantListing } from '../operator/across-tenants.js';
import { limitOption, operatorCommand, tenantsOf, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';

/** Registers `quotaplane reservations [--tenant T] [--limit N]`: the spend holds of open runs. */
export function registerReservations(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'reservations', io, 'reads')
    .summary('list spend holds: what each open run may still cost, and in which period')
    .description('List the holds of one tenant or every tenant by run id: the period held in and the remaining worst case.')
    .addOption(new Option('--tenant <tenant>', 'one tenant (default: every tenant)').argParser(tenantName))
    .addOption(limitOption())
    .action(async (flags: TargetFlags & { tenant?: string; limit: number }) => {
      const truncated = await withTarget(flags, 'reads', async (target) =>
        printTenantListing(io, flags.json, {
          tenants: await tenantsOf(target, flags.tenant),
          limit: flags.limit,
          fetch: async (tenant, want) => {
            const page = await target.reservations({ tenant, limit: want });
            return { items: page.holds, truncated: page.truncated };
          },
          member: 'reservations',
          empty: 'no holds',
          header: ['TENANT', 'RUN', 'PERIOD', 'TOKENS', 'MINOR UNITS'],
          row: (hold) => [hold.tenant, hold.run, hold.period, String(hold.remaining.tokens), String(hold.remaining.minorUnits)],
        }),
      );
      setExitStatus(truncated ? EXIT.TRUNCATED : EXIT.OK);
    });
}
