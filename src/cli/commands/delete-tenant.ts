import { Option, type Command } from 'commander';

import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { writeAnswer } from '../operator/format.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';
import { UsageError } from '../usage-error.js';

interface DeleteTenantFlags extends TargetFlags {
  readonly reason: string;
  readonly confirm?: string;
}

/** Registers `quotaplane delete-tenant <tenant> --reason R --confirm <tenant>` (docs/design/rules.md#l95-4–#l95-7). */
export function registerDeleteTenant(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'delete-tenant', io, 'writes')
    .summary('delete a tenant but its audit chain (refused while anything of it still runs or holds spend)')
    .description(
      'Delete a tenant: its quota, runs, passes, spend, receipts, halts, dispatches, waiters, model-call\n' +
        'ceilings, meters and calls, and its own API keys (which stop authenticating) are removed in one\n' +
        'transaction, and its audit chain is kept, ending in a tenant.delete row with the reason. Refused\n' +
        'while it has a running run, a slot, a hold, a pass whose spend is not booked, a waiting admission,\n' +
        'one the queue granted or refused whose caller has not yet collected it, or a model call in flight:\n' +
        'each is named with what ends it (runs, reservations and attention --tenant T, and calls open T,\n' +
        "list them). There is no undo: --confirm must repeat the tenant's name. Through a server, only an\n" +
        'operator key of every tenant may delete.',
    )
    .argument('<tenant>', 'the tenant to delete', tenantName)
    .requiredOption('--reason <text>', 'why the tenant is deleted (kept in its audit chain)')
    .addOption(new Option('--confirm <tenant>', "the tenant's name again: there is no undo"))
    .action(async (tenant: string, flags: DeleteTenantFlags) => {
      if (flags.confirm !== tenant) {
        throw new UsageError(
          flags.confirm === undefined
            ? `deleting '${tenant}' cannot be undone: repeat its name with --confirm ${tenant}`
            : `--confirm '${flags.confirm}' is not the tenant named ('${tenant}'): repeat the same name to delete it`,
        );
      }
      const answer = await withTarget(flags, 'writes', (target) => target.deleteTenant({ tenant, reason: flags.reason }));
      writeAnswer(io, flags.json, answer, () => {
        const keys = answer.keysDeleted.length === 0 ? 'it had no API keys of its own' : `its API keys ${answer.keysDeleted.join(', ')} were removed`;
        return `deleted tenant '${tenant}': ${keys}; its audit chain is kept, ending in row ${answer.audit.seq} (tenant.delete)\n`;
      });
      setExitStatus(EXIT.OK);
    });
}
