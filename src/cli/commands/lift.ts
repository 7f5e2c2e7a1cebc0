import type { Command } from 'commander';

import { HALT_SCOPE_FORMS } from '../../core/halt-scope.js';
import type { SetExitStatus } from '../command-output.js';
import { EXIT } from '../exit-status.js';
import type { CliIo } from '../io.js';
import { writeAnswer } from '../operator/format.js';
import { cliScope } from '../operator/scope-argument.js';
import { operatorCommand, withTarget, type TargetFlags } from '../operator/target-options.js';
import { tenantName } from '../options.js';

/** Registers `quotaplane lift <scope> --tenant T`: journaled first, then compare-and-delete (docs/design/decisions.md "Lifting is journaled first, and everything an operator does is audited"). */
export function registerLift(program: Command, io: CliIo, setExitStatus: SetExitStatus): void {
  operatorCommand(program, 'lift', io, 'writes')
    .summary('lift the halt on a scope of a tenant (audited); exit 1 when none stood')
    .description(
      'Lift the standing halt on one of the scopes\n' +
        `  ${HALT_SCOPE_FORMS.join('\n  ')}\n` +
        'The lift is written to the audit log before the halt row goes. Exit status 1\n' +
        'when no halt stood on the scope (then nothing is written).',
    )
    .argument('<scope>', 'the scope whose halt to lift')
    .requiredOption('--tenant <tenant>', 'the tenant', tenantName)
    .action(async (scope: string, flags: TargetFlags & { tenant: string }) => {
      const key = cliScope(scope);
      const result = await withTarget(flags, 'writes', (target) => target.lift({ tenant: flags.tenant, scope: key }));
      writeAnswer(io, flags.json, { tenant: flags.tenant, scope: key, ...result }, () => {
        if (!result.wasStanding) return `no halt stands on ${key} of tenant '${flags.tenant}'; nothing was written\n`;
        if (!result.removed) return `the lift of ${key} (tenant '${flags.tenant}') is recorded, but the halt changed meanwhile: another lift removed it or a re-throw stands\n`;
        return `lifted ${key} of tenant '${flags.tenant}'\n`;
      });
      setExitStatus(result.wasStanding ? EXIT.OK : EXIT.FINDING);
    });
}
