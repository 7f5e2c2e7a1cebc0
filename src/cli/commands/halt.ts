import type { Command } from 'commander';

import { HALT_SCOPE_FORMS } from '../../core/halt-scope.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { instant } from '../../core/instant.js';
import { operatorText, writeAnswer } from '../operator/format.js';
import { cliScope } from '../operator/scope-argument.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';
import { newTenantOption } from '../operator/new-tenant.js';

interface HaltFlags extends TargetFlags {
  readonly tenant: string;
  readonly reason: string;
  readonly newTenant: boolean;
}

/** Registers `quotaplane halt <scope> --tenant T --reason R`. */
export function registerHalt(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'halt', io, 'writes')
    .summary('throw an emergency halt on a scope of a tenant (audited)')
    .description(
      'Throw (or re-throw, replacing) a halt on one of the scopes\n' +
        `  ${HALT_SCOPE_FORMS.join('\n  ')}\n` +
        'Tenant, agent and revision halts stop admission; a subject halt also withholds\n' +
        'running work whose delegation chain holds the principal. The audit row is\n' +
        'written before the halt stands. A tenant with no quota and no history is\n' +
        'refused (exit 1, naming the nearest known tenant) unless --new-tenant says it is new.',
    )
    .argument('<scope>', 'what to stop: tenant, agent:<name>, revision:<digest> or subject:<principal>')
    .requiredOption('--tenant <tenant>', 'the tenant', tenantName)
    .requiredOption('--reason <text>', 'why; shown in every refusal the halt causes')
    .addOption(newTenantOption())
    .action(async (scope: string, flags: HaltFlags) => {
      const key = cliScope(scope);
      const result = await withTarget(flags, 'writes', (target) =>
        target.halt({ tenant: flags.tenant, scope: key, reason: flags.reason, newTenant: flags.newTenant }),
      );
      writeAnswer(io, flags.json, { tenant: flags.tenant, ...result }, () =>
        `halted ${result.scope} of tenant '${flags.tenant}' (reaches ${result.reach}): ${result.reason}\n` +
        `by ${operatorText(result.by)} at ${instant(result.atMs)}\n`,
      );
      setExitStatus(EXIT.OK);
    });
}
